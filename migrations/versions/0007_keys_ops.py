"""operations: API keys' last use; indexes for the storage quota and the blob sweep

- `api_keys.last_used_at` (`contextq keys list`), written at most once a minute per key;
- `ix_files_owner_size` (owner_id, size_bytes): MAX_STORAGE_BYTES_PER_OWNER sums an
  owner's sizes from the index alone;
- `ix_files_content_sha256`, `ix_conversion_cache_markdown_sha256`: the blob sweep asks
  whether any row still points at a blob.

Revision ID: 0007_keys_ops
Revises: 0009_memory_retention
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_keys_ops"
down_revision: str | None = "0009_memory_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("files", schema=None) as batch_op:
        batch_op.create_index("ix_files_owner_size", ["owner_id", "size_bytes"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_files_content_sha256"), ["content_sha256"], unique=False
        )
    with op.batch_alter_table("conversion_cache", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_conversion_cache_markdown_sha256"), ["markdown_sha256"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("conversion_cache", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_conversion_cache_markdown_sha256"))
    with op.batch_alter_table("files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_files_content_sha256"))
        batch_op.drop_index("ix_files_owner_size")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_at")
