"""memory options on conversations; retention and repaired on compactions
(docs/history.md#hierarchical-memory, docs/history.md#compaction)

- `conversations.memory_options`: the hierarchical memory's options a client set
  (`max_working_memory`, `max_context_tokens`, `compression_threshold`, …);
- `compactions.retention`: share of the checked items (goal, open subtasks, decisions,
  recurring error patterns) present in a summary before repair (NULL for older rows);
- `compactions.repaired`: the items appended to it.

Revision ID: 0009_memory_retention
Revises: 0006_workspaces
Create Date: 2026-11-24 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_memory_retention"
down_revision: str | None = "0006_workspaces"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("memory_options", sa.JSON(), nullable=True))
    with op.batch_alter_table("compactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("retention", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("repaired", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("compactions", schema=None) as batch_op:
        batch_op.drop_column("repaired")
        batch_op.drop_column("retention")
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_column("memory_options")
