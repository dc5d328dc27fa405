"""stored token counts without per-message framing (docs/token-counting.md: the JSON serialisation
as sent, nothing added)

Rows counted before held the JSON's tokens plus 3 per message. Every count moves by an
exact amount, so the rewrite is exact and reversible:

- `messages.token_count` - 3;
- `messages.cum_tokens` (the conversation's running total through the message) - 3 *
  seq: seqs are 1, 2, 3, … per conversation (assigned under its row lock, never
  deleted but with the conversation);
- `conversations.total_tokens` - 3 * `message_count`, and `tokens_since_compaction`
  - 3 * (`last_seq` - `last_compacted_seq`): the messages after the newest compaction.

Compaction rows keep the figures they reported when they ran.

Revision ID: 0012_honest_counts
Revises: 0011_compaction_provenance
Create Date: 2027-01-12 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_honest_counts"
down_revision: str | None = "0011_compaction_provenance"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FRAMING = 3  # tokens the counts held per message


MESSAGES = sa.text(
    "UPDATE messages SET token_count = token_count + :d, cum_tokens = cum_tokens + :d * seq"
)
CONVERSATIONS = sa.text(
    "UPDATE conversations SET total_tokens = total_tokens + :d * message_count, "
    "tokens_since_compaction = tokens_since_compaction + :d * (last_seq - last_compacted_seq)"
)


def _shift(sign: int) -> None:
    d = sign * FRAMING
    op.execute(MESSAGES.bindparams(d=d))
    op.execute(CONVERSATIONS.bindparams(d=d))


def upgrade() -> None:
    _shift(-1)


def downgrade() -> None:
    _shift(+1)
