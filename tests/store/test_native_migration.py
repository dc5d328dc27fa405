"""Migration 0016_native_turns on SQLite and PostgreSQL: the three nullable columns of a
native turn's slice, a payload kept as written (key order, nulls, empty strings), and
the way down and up again; the models match the migrations."""

from __future__ import annotations

import json

from alembic import command
from sqlalchemy import inspect, text

from store.db import get_engine, reset_engine
from tests.store.test_context_migrations import CONVERSATION, MESSAGE
from tests.store.test_projects_migration import BOTH_BACKENDS, alembic_config

NATIVE = ("native_format", "native_model", "native_payload")
PAYLOAD = {
    "role": "assistant",
    "content": [{"type": "thinking", "thinking": "", "signature": "s", "z": None}],
}


def _columns() -> set[str]:
    reset_engine()
    return {c["name"] for c in inspect(get_engine()).get_columns("messages")}


@BOTH_BACKENDS
def test_native_columns_go_down_and_up(stack, owner) -> None:
    assert set(NATIVE) <= _columns()
    with get_engine().begin() as conn:
        conn.execute(text(CONVERSATION), {"o": owner.owner_id, "total": 0, "since": 0})
        conn.execute(text(MESSAGE), {"id": "m1", "seq": 1, "n": 1, "cum": 1})
        conn.execute(
            text(
                "UPDATE messages SET native_format = 'anthropic', native_model = 'claude-x',"
                " native_payload = :p WHERE id = 'm1'"
            ),
            {"p": json.dumps(PAYLOAD)},
        )
        stored = conn.execute(text("SELECT native_payload FROM messages")).scalar_one()
    as_text = stored if isinstance(stored, str) else json.dumps(stored)
    assert as_text == json.dumps(PAYLOAD)  # json, not jsonb: the text as written
    cfg = alembic_config()
    command.downgrade(cfg, "0015_search_speed")
    assert not set(NATIVE) & _columns()
    command.upgrade(cfg, "head")
    assert set(NATIVE) <= _columns()
    with get_engine().connect() as conn:  # an older row is a default-form message
        assert conn.execute(text("SELECT native_format FROM messages")).scalar_one() is None
    command.check(cfg)
