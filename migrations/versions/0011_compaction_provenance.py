"""provenance of compactions (docs/provenance.md): `compactions.unsourced_items`, the structured
items of a summary whose source message is unknown (`(#?)`); NULL for rows from before
summaries cited their messages

Revision ID: 0011_compaction_provenance
Revises: 0005_context
Create Date: 2026-11-27 03:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_compaction_provenance"
down_revision: str | None = "0005_context"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("compactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("unsourced_items", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("compactions", schema=None) as batch_op:
        batch_op.drop_column("unsourced_items")
