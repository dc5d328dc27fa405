"""The carried state's conditional write (issue 27) on SQLite and PostgreSQL: a write is
made only over the version it was read at, two sessions that read the same version
cannot both write, the fields not named stay as stored; and migration 0017 gives the
rows already stored version 0 (and goes down and up again)."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from sqlalchemy import text

from service import history
from store import context_queries as cq
from store.db import get_engine, read_session, reset_engine, session_scope
from tests.store.test_projects_migration import BOTH_BACKENDS, alembic_config

MODEL = "gpt-4o"


def _conversation(owner: Any) -> str:
    from contextq.settings import get_settings

    with session_scope() as session:
        return history.create_conversation(
            session=session, settings=get_settings(), owner_id=owner.owner_id, data={}
        ).id


def _get(cid: str) -> cq.Carried:
    with read_session() as session:
        return cq.get_carried(session, conversation_id=cid, model=MODEL)


def _put(cid: str, version: int | None, **moved: int) -> bool:
    with session_scope() as session:
        return cq.put_carried(
            session, conversation_id=cid, model=MODEL, moved=moved, version=version
        )


@BOTH_BACKENDS
def test_only_the_first_of_two_writes_from_one_version_lands(stack: Any, owner: Any) -> None:
    cid = _conversation(owner)
    assert _get(cid) == cq.Carried()  # nothing stored: no version
    assert _put(cid, None, seq=10) is True
    assert _put(cid, None, seq=12) is False  # another read inserted the row first
    assert _get(cid) == cq.Carried(version=1, seq=10, clear_seq=None)
    assert _put(cid, 1, clear_seq=20) is True  # the cut point stays as stored
    assert _put(cid, 1, seq=30) is False  # a read of version 1 lost to the one above
    assert _get(cid) == cq.Carried(version=2, seq=10, clear_seq=20)
    assert _put(cid, 2, seq=30, clear_seq=40) is True
    assert _get(cid) == cq.Carried(version=3, seq=30, clear_seq=40)
    other = cq.get_carried  # each model has its own row and version
    with read_session() as session:
        assert other(session, conversation_id=cid, model="gpt-4o-mini") == cq.Carried()
    with pytest.raises(ValueError, match="not a carried field"):
        _put(cid, 3, cut_seq=1)


@BOTH_BACKENDS
def test_two_open_sessions_of_one_version_cannot_both_write(stack: Any, owner: Any) -> None:
    """Interleaved: both read version 1, the first commits, the second's write finds it
    gone (on PostgreSQL the UPDATE re-checks the row the first one committed)."""
    cid = _conversation(owner)
    assert _put(cid, None, seq=5, clear_seq=9)
    with read_session() as a_read, read_session() as b_read:
        a = cq.get_carried(a_read, conversation_id=cid, model=MODEL)
        b = cq.get_carried(b_read, conversation_id=cid, model=MODEL)
        assert a.version == b.version == 1
        assert _put(cid, b.version, seq=7) is True
        assert _put(cid, a.version, seq=6, clear_seq=11) is False
    assert _get(cid) == cq.Carried(version=2, seq=7, clear_seq=9)


@BOTH_BACKENDS
def test_rows_stored_before_0017_start_at_version_0(stack: Any, owner: Any) -> None:
    cid = _conversation(owner)
    cfg = alembic_config()
    command.downgrade(cfg, "0016_native_turns")
    reset_engine()
    with get_engine().begin() as conn:
        conn.execute(
            text(
                "INSERT INTO context_cut_points (conversation_id, model, seq, clear_seq,"
                " updated_at) VALUES (:cid, :model, 40, 44, CURRENT_TIMESTAMP)"
            ),
            {"cid": cid, "model": MODEL},
        )
    command.upgrade(cfg, "head")
    reset_engine()
    assert _get(cid) == cq.Carried(version=0, seq=40, clear_seq=44)
    assert _put(cid, 0, seq=48) is True
    command.check(cfg)  # the models match the migrations
