"""Worker signals (filled by the spine)."""
