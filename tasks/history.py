"""Tasks over history (filled by the history service)."""
