"""chunk embeddings for hybrid search (docs/retrieval.md, issue 22): `chunk_sets.embedder` names the
model that embedded a set's chunks (NULL: not embedded, e.g. indexed before this
revision); `chunks.embedding` holds the vectors of each chunk's passages (its sentences and lines):
rows of 256 little-endian float16 values, a BLOB (SQLite) or bytea (PostgreSQL).

The API ranks by brute force over a per-process cache of these. With pgvector installed,
the same vectors would go to a table `chunk_passages(chunk_id, passage, vector(256))`
with an HNSW index, filled from this column (a chunk is scored by its best passage, so
one vector column per chunk would not hold them).

PostgreSQL's full-text column is rebuilt so that `- _ . /` separate words, as SQLite's
unicode61 tokenizer and the query's terms (`contextq.retrieval.terms`) do: PostgreSQL's
parser reads `INC-68311616` as `inc` and the signed number `-68311616`, so a search for
the incident's number found nothing (bench/retrieval.py: 19 of 200 lexical queries).

Revision ID: 0014_chunk_embeddings
Revises: 0013_clearing_line
Create Date: 2026-11-27 03:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_chunk_embeddings"
down_revision: str | None = "0013_clearing_line"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EMBEDDING = sa.LargeBinary()


SEPARATORS = "translate({column}, '-_./', '    ')"
POSTGRES_TSV = """ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, {heading}), 'B')
    || setweight(to_tsvector('english'::regconfig, {text}), 'A')) STORED"""


def _postgres_tsv(separated: bool) -> None:
    def column(name: str) -> str:
        return SEPARATORS.format(column=name) if separated else name

    op.execute("DROP INDEX IF EXISTS ix_chunks_tsv")
    op.execute("ALTER TABLE chunks DROP COLUMN tsv")
    heading = column("coalesce(heading, '')")
    op.execute(POSTGRES_TSV.format(heading=heading, text=column("text")))
    op.execute("CREATE INDEX ix_chunks_tsv ON chunks USING gin (tsv)")


def upgrade() -> None:
    with op.batch_alter_table("chunk_sets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("embedder", sa.String(length=64), nullable=True))
    with op.batch_alter_table("chunks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("embedding", EMBEDDING, nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        _postgres_tsv(separated=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _postgres_tsv(separated=False)
    with op.batch_alter_table("chunks", schema=None) as batch_op:
        batch_op.drop_column("embedding")
    with op.batch_alter_table("chunk_sets", schema=None) as batch_op:
        batch_op.drop_column("embedder")
