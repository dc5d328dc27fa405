"""Migrations 0012_honest_counts and 0013_clearing_line on SQLite and PostgreSQL: stored
token counts lose the 3 tokens of per-message framing exactly (per message, running
totals, the conversation's totals) and get them back going down; the clearing line is
a nullable column beside the cut point, which may itself be unset."""

from __future__ import annotations

from typing import Any

from alembic import command
from sqlalchemy import text

from store.db import get_engine, reset_engine
from tests.store.test_projects_migration import BOTH_BACKENDS, alembic_config

CONVERSATION = (
    "INSERT INTO conversations (id, owner_id, replace_system_prompt, message_count,"
    " total_tokens, last_seq, pinned_count, last_compacted_seq, tokens_since_compaction,"
    " created_at, updated_at) VALUES ('c1', :o, false, 3, :total, 3, 0, 1, :since,"
    " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
)
MESSAGE = (
    "INSERT INTO messages (id, conversation_id, seq, role, pinned, token_count, cum_tokens,"
    " created_at) VALUES (:id, 'c1', :seq, 'user', false, :n, :cum, CURRENT_TIMESTAMP)"
)


def _rows() -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    with get_engine().connect() as conn:
        messages = conn.execute(
            text("SELECT seq, token_count, cum_tokens FROM messages ORDER BY seq")
        ).all()
        totals = conn.execute(
            text("SELECT total_tokens, tokens_since_compaction FROM conversations")
        ).one()
    return [tuple(m) for m in messages], tuple(totals)


@BOTH_BACKENDS
def test_counts_lose_the_framing_exactly_and_get_it_back(stack, owner) -> None:
    cfg = alembic_config()
    command.downgrade(cfg, "0011_compaction_provenance")  # counts as they were stored before
    reset_engine()
    framed = [13, 23, 8]  # JSON tokens 10, 20, 5 plus 3 each
    with get_engine().begin() as conn:
        total = sum(framed)
        conn.execute(text(CONVERSATION), {"o": owner.owner_id, "total": total, "since": 31})
        cum = 0
        for seq, n in enumerate(framed, start=1):
            cum += n
            conn.execute(text(MESSAGE), {"id": f"m{seq}", "seq": seq, "n": n, "cum": cum})
    command.upgrade(cfg, "head")
    reset_engine()
    messages, totals = _rows()
    assert messages == [(1, 10, 10), (2, 20, 30), (3, 5, 35)]
    assert totals == (35, 25)  # the two messages after the compaction through seq 1
    command.downgrade(cfg, "0011_compaction_provenance")
    reset_engine()
    assert _rows() == ([(1, 13, 13), (2, 23, 36), (3, 8, 44)], (44, 31))
    command.upgrade(cfg, "head")


@BOTH_BACKENDS
def test_the_clearing_line_sits_beside_the_cut_point(stack, owner) -> None:
    reset_engine()
    with get_engine().begin() as conn:
        conn.execute(text(CONVERSATION), {"o": owner.owner_id, "total": 0, "since": 0})
        conn.execute(
            text(
                "INSERT INTO context_cut_points (conversation_id, model, seq, clear_seq,"
                " updated_at) VALUES ('c1', 'gpt-4', NULL, 40, CURRENT_TIMESTAMP)"
            )
        )
    cfg = alembic_config()
    command.downgrade(cfg, "0012_honest_counts")  # a row with no cut point cannot stay
    reset_engine()
    with get_engine().connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM context_cut_points")).scalar() == 0
    command.upgrade(cfg, "head")
    command.check(cfg)  # the models match the migrations
