"""the clearing line beside the cut point
(docs/context.md#clearing-old-tool-results-with-hysteresis: the line has hysteresis, stored per
conversation and model)

`context_cut_points.clear_seq`: tool results with a lower seq stand as stubs in the
conversation's contexts for that model; it moves only when the context no longer
fits. `seq` (the cut point) becomes nullable: a row may hold a line before any cut.

Revision ID: 0013_clearing_line
Revises: 0012_honest_counts
Create Date: 2027-01-12 10:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_clearing_line"
down_revision: str | None = "0012_honest_counts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("context_cut_points", schema=None) as batch_op:
        batch_op.add_column(sa.Column("clear_seq", sa.Integer(), nullable=True))
        batch_op.alter_column("seq", existing_type=sa.Integer(), nullable=True)


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM context_cut_points WHERE seq IS NULL"))
    with op.batch_alter_table("context_cut_points", schema=None) as batch_op:
        batch_op.alter_column("seq", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column("clear_seq")
