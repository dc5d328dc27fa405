"""workspace entries: one row per file in a conversation's workspace (docs/workspaces.md)

The bytes live in DATA_DIR/workspaces/<owner>/<conversation>/<path>; the row names the
File that processes them (SET NULL when that File is deleted) and goes with its
conversation (CASCADE). `ix_workspace_entries_file_id` serves the SET NULL on file
deletes, `ix_workspace_entries_owner_file` the storage quota's sum.

Revision ID: 0006_workspaces
Revises: 0004_projects_chunks
Create Date: 2026-11-23 19:41:37.467030
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0006_workspaces"
down_revision: str | None = "0004_projects_chunks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "workspace_entries",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("owner_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("path", sqlmodel.sql.sqltypes.AutoString(length=1024), nullable=False),
        sa.Column("file_id", sa.String(length=32), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["file_id"], ["files.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["owners.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "conversation_id", "path", name="uq_workspace_entries_conversation_path"
        ),
    )
    with op.batch_alter_table("workspace_entries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_workspace_entries_file_id"), ["file_id"], unique=False)
        batch_op.create_index(
            "ix_workspace_entries_owner_file", ["owner_id", "file_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("workspace_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_workspace_entries_owner_file")
        batch_op.drop_index(batch_op.f("ix_workspace_entries_file_id"))

    op.drop_table("workspace_entries")
