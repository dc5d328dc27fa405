"""Tasks over files (filled by the spine)."""
