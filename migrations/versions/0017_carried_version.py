"""a version on the state a conversation's contexts carry (issue 27: one answer under
concurrency)

`context_cut_points.version`: every write of the carried state (the cut point, the
clearing line, and whatever is later stored beside them) moves it on by one, and is made
only if it is still the version the read was assembled from (a compare-and-set, the
same statement on both backends). A read that finds it moved reads the winner's state
and assembles again with it, so concurrent reads answer the same. Rows already stored
start at 0.

Revision ID: 0017_carried_version
Revises: 0016_native_turns
Create Date: 2027-01-24 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_carried_version"
down_revision: str | None = "0016_native_turns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("context_cut_points", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("version", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("context_cut_points", schema=None) as batch_op:
        batch_op.drop_column("version")
