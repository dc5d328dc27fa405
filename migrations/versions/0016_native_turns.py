"""native turns (docs/api.md#native-turns): each message may carry its slice of a vendor's
own turn, verbatim, beside the normalised fields the engine reasons over

`messages.native_format` (`anthropic`, `responses`, `gemini`; NULL for the default
form), `messages.native_model` (the model that produced the turn) and
`messages.native_payload` (the JSON exactly as posted: a MessageParam, a list of
Responses items or a Gemini Content). All nullable: every older row stays a default-form
message. `JSON` keeps the text as written on both backends (PostgreSQL's `json`, not
`jsonb`, which would reorder keys).

Revision ID: 0016_native_turns
Revises: 0015_search_speed
Create Date: 2027-01-20 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0016_native_turns"
down_revision: str | None = "0015_search_speed"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("native_format", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True)
        )
        batch_op.add_column(
            sa.Column("native_model", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True)
        )
        batch_op.add_column(sa.Column("native_payload", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("native_payload")
        batch_op.drop_column("native_model")
        batch_op.drop_column("native_format")
