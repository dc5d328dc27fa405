"""search speed on PostgreSQL (docs/retrieval.md, issue 22): the GIN index's pending list bounded
to 256 kB, and chunks' vectors stored without compression.

- `ix_chunks_tsv` keeps GIN's fast update (new entries go to a pending list merged in
  bulk: a 300-page PDF's chunks cost a third less to insert than with `fastupdate = off`)
  but with a pending list of at most 256 kB instead of 4 MB. Every search reads the whole
  pending list once per lexeme it looks up, so a list of 4 MB (about 500 pages, left
  by the last indexed files until a vacuum merges it) cost about 1 ms per lexeme and
  made PostgreSQL's bm25 side several times slower than its index scan; at 256 kB
  (32 pages) it is read in tens of microseconds, and the inserting transaction merges
  it a little more often.
- `chunks.embedding` (a chunk's int8 passage vectors, about 5 kB) is stored out of line
  uncompressed (`STORAGE EXTERNAL`): the vectors do not compress, and pglz tried on every
  row.

SQLite: nothing to change (the vectors' new storage is named by `chunk_sets.embedder`;
older float16 vectors are read as they are).

Revision ID: 0015_search_speed
Revises: 0014_chunk_embeddings
Create Date: 2026-11-28 05:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015_search_speed"
down_revision: str | None = "0014_chunk_embeddings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PENDING_LIST_KB = 256


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"ALTER INDEX ix_chunks_tsv SET (gin_pending_list_limit = {PENDING_LIST_KB})")
    op.execute("ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE EXTERNAL")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE EXTENDED")
    op.execute("ALTER INDEX ix_chunks_tsv RESET (gin_pending_list_limit)")
