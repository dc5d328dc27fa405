"""Projects' retrieval engine (docs/retrieval.md): chunking a file's whole text, query terms.

No SQL here: `store/search.py` stores chunk sets and searches them in the database's own
full-text engine (SQLite FTS5 / PostgreSQL tsvector).
"""

from contextq.retrieval.chunking import (
    CHUNKER_VERSION,
    Chunk,
    ChunkedText,
    ChunkerOptions,
    chunk_sections,
)
from contextq.retrieval.terms import search_terms

__all__ = [
    "CHUNKER_VERSION",
    "Chunk",
    "ChunkedText",
    "ChunkerOptions",
    "chunk_sections",
    "search_terms",
]
