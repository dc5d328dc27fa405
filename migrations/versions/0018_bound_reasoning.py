"""bound reasoning's state beside the cut point (issue 27: a context that never breaks
what the model saw)

`context_cut_points.reasoning_seq`: the watermark (reasoning of rows at or below it is
never sent again); `context_cut_points.binding`: JSON with the newest answers'
fingerprints (last seq, format, fingerprint, head), each kept row's bound fingerprint and
the turn's pins (date line, citation section, where each reminder was first sent).
Written with the carried state's compare-and-set (`version`). Rows already stored have
none: their next read binds what it sees.

Revision ID: 0018_bound_reasoning
Revises: 0017_carried_version
Create Date: 2027-01-26 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_bound_reasoning"
down_revision: str | None = "0017_carried_version"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("context_cut_points", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reasoning_seq", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("binding", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("context_cut_points", schema=None) as batch_op:
        batch_op.drop_column("binding")
        batch_op.drop_column("reasoning_seq")
