"""chunk embeddings for hybrid search (SPEC §8, issue 22): `chunk_sets.embedder` names the
model that embedded a set's chunks (NULL: not embedded, e.g. indexed before this
revision); `chunks.embedding` holds each chunk's vector.

SQLite: a BLOB of 256 little-endian float16 values. PostgreSQL: `real[]` (the same
float16-rounded values), a column that pgvector can take over when it is installed:
`ALTER TABLE chunks ALTER COLUMN embedding TYPE vector(256) USING embedding::vector(256)`
then an HNSW index on it; until then the API ranks by brute force over a cached matrix.

Revision ID: 0011_chunk_embeddings
Revises: 0005_context
Create Date: 2026-11-27 03:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011_chunk_embeddings"
down_revision: str | None = "0005_context"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EMBEDDING = sa.LargeBinary().with_variant(postgresql.ARRAY(sa.REAL()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("chunk_sets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("embedder", sa.String(length=64), nullable=True))
    with op.batch_alter_table("chunks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("embedding", EMBEDDING, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chunks", schema=None) as batch_op:
        batch_op.drop_column("embedding")
    with op.batch_alter_table("chunk_sets", schema=None) as batch_op:
        batch_op.drop_column("embedder")
