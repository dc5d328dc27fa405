"""Tables of projects and retrieval (docs/retrieval.md): projects, chunk sets, chunks, file links.

A chunk set is the chunks of one content (the upload's bytes, `files.sha256`) made by one
chunker configuration (`ChunkerOptions.fingerprint()`): its `key` is both, like the
conversion cache's, so every file with those bytes — any owner's — shares it and
re-indexing reuses it. `file_chunk_sets` says which set a file was indexed into; search
reaches chunks only through it and the file's owner, project and status.

The full-text index is created by migration `0004_projects_chunks`, per dialect:
- SQLite: `chunks_fts`, an external-content FTS5 table over `chunks(text, heading)`
  (tokenizer `porter unicode61 remove_diacritics 2`); `store_chunk_set` adds a set's
  entries in one statement, and triggers on `chunks` remove them, so every path that
  deletes chunks (the set's ON DELETE CASCADE included) keeps it in sync;
- PostgreSQL: `chunks.tsv`, a stored generated `tsvector` (english; the heading weighted
  B, the text A) with a GIN index.
Each chunk also carries its passages' dense vectors (`embedding`, made by the set's `embedder`) for
hybrid search (migration `0014_chunk_embeddings`).
Neither full-text index is mapped here: `store/search.py` reaches them with SQL of its dialect.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, ForeignKey, Integer, LargeBinary, Text
from sqlmodel import Field, SQLModel

from contextq.retrieval.chunking import MAX_CHUNKS_PER_FILE
from store.tables import _ts, new_id

# SQLite: INTEGER PRIMARY KEY is the rowid (the FTS5 table points at chunks' rowids);
# PostgreSQL: bigint.
_BIG_ID = BigInteger().with_variant(Integer(), "sqlite")

# A chunk's passage vectors (contextq.retrieval.embedding.to_bytes): rows of float16
# values, BLOB / bytea (migration 0014_chunk_embeddings says how pgvector would take over).
EMBEDDING_TYPE = LargeBinary()

# A chunk's id is its set's id shifted left by CHUNK_INDEX_BITS, plus its index: search
# keeps only the chunks of a project's sets from the id alone (`id >> 20`), before ranking,
# with no lookup per matching row. A set holds at most 2**20 chunks (the chunker's cap).
CHUNK_INDEX_BITS = 20
MAX_CHUNKS_PER_SET = 1 << CHUNK_INDEX_BITS
assert MAX_CHUNKS_PER_FILE <= MAX_CHUNKS_PER_SET


def chunk_id(chunk_set_id: int, index: int) -> int:
    if not 0 <= index < MAX_CHUNKS_PER_SET:
        raise ValueError(f"chunk index {index} is outside 0..{MAX_CHUNKS_PER_SET - 1}")
    return (chunk_set_id << CHUNK_INDEX_BITS) | index


class Project(SQLModel, table=True):
    __tablename__ = "projects"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="owners.id", index=True, max_length=32)
    name: str = Field(max_length=200)
    instructions: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


class ChunkSet(SQLModel, table=True):
    """The chunks of one content by one chunker configuration, shared by all its files."""

    __tablename__ = "chunk_sets"

    id: int | None = Field(
        default=None, sa_column=Column(_BIG_ID, primary_key=True, autoincrement=True)
    )
    key: str = Field(max_length=160, unique=True)  # sha256:fingerprint
    content_sha256: str = Field(max_length=64, index=True)
    chunker: str = Field(max_length=96)  # ChunkerOptions.fingerprint()
    chunk_count: int = 0
    token_count: int = 0  # sum of the chunks' tokens (what MAX_INDEX_TOKENS_PER_FILE caps)
    complete: bool = True
    # where indexing stopped when the cap was reached ({"page": 40}, {"sheet", "line"}), else None
    stopped_at: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    # the model that embedded the chunks (contextq.retrieval.embedding.EMBEDDER); None: the
    # set has no vectors (indexed before hybrid search) and dense search skips it
    embedder: str | None = Field(default=None, max_length=64)
    created_at: datetime = _ts()


class ChunkRow(SQLModel, table=True):
    """One chunk: its text and where it came from (page, sheet, line or row range).

    `id` is `chunk_id(chunk_set_id, chunk_index)`, so a set's chunks are one id range
    (read and deleted by it; no other index on this table)."""

    __tablename__ = "chunks"

    id: int = Field(sa_column=Column(_BIG_ID, primary_key=True, autoincrement=False))
    chunk_set_id: int = Field(
        sa_column=Column(_BIG_ID, ForeignKey("chunk_sets.id", ondelete="CASCADE"), nullable=False)
    )
    chunk_index: int
    text: str = Field(sa_column=Column(Text, nullable=False))
    heading: str | None = Field(default=None, sa_column=Column(Text))
    token_count: int
    page: int | None = None
    sheet: str | None = Field(default=None, max_length=255)
    line_start: int | None = None
    line_end: int | None = None
    embedding: bytes | None = Field(default=None, sa_column=Column(EMBEDDING_TYPE, nullable=True))


class FileChunkSet(SQLModel, table=True):
    """Which chunk set a file was indexed into (deleted with the file)."""

    __tablename__ = "file_chunk_sets"

    file_id: str = Field(
        primary_key=True, max_length=32, foreign_key="files.id", ondelete="CASCADE"
    )
    chunk_set_id: int = Field(
        sa_column=Column(
            _BIG_ID, ForeignKey("chunk_sets.id", ondelete="CASCADE"), nullable=False, index=True
        )
    )
    created_at: datetime = _ts()
