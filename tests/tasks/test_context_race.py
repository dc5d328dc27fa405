"""Issue 27, "One answer under concurrency", at the service: two context reads of one
conversation interleaved deterministically (B runs whole, in its own sessions, just as
A is about to store what it moved). The read that stores second lost the race: it reads
the winner's state and assembles again with it, so both answer the same and the stored
state is the one both answered. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from contextq.settings import get_settings
from service import event_buffer, history
from service.history import context as ctx
from store import context_queries as cq
from store.db import read_session, session_scope
from tests.integration.context_race import FIRST_TURNS, MODEL, VOLATILE, WINDOW, turn

pytestmark = [
    pytest.mark.parametrize(
        "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
    ),
    pytest.mark.stack_env(MAX_CONTEXT_TOKENS=str(WINDOW)),
]


@pytest.fixture(autouse=True)
def _events_written(stack: Any) -> Iterator[None]:
    """The reads' `context.built` events are written into this test's database."""
    yield
    event_buffer.flush()


def _conversation(owner: Any, turns: range) -> str:
    with session_scope() as session:
        cid = history.create_conversation(
            session=session, settings=get_settings(), owner_id=owner.owner_id, data={"model": MODEL}
        ).id
    _append(owner, cid, turns)
    return cid


def _append(owner: Any, cid: str, turns: range) -> None:
    with session_scope() as session:
        history.append_messages(
            session=session,
            settings=get_settings(),
            owner_id=owner.owner_id,
            conversation_id=cid,
            messages=[m for n in turns for m in turn(n)],
        )


def _read(owner: Any, cid: str) -> dict[str, Any]:
    """A context read in its own read transaction, as the API runs one."""
    with read_session() as session:
        return history.build_context(
            session=session,
            settings=get_settings(),
            owner_id=owner.owner_id,
            conversation_id=cid,
            model=MODEL,
        )


def _stored(cid: str) -> cq.Carried:
    with read_session() as session:
        return cq.get_carried(session, conversation_id=cid, model=MODEL)


def _same(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in VOLATILE}


class Interleaved:
    """`ctx._store` wrapped: the first read to reach it runs `other` first (whole), and
    what each call was asked to store is recorded with whether the state was written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, other: Callable[[], Any]) -> None:
        self.other, self.result = other, None
        self.stores: list[tuple[int | None, int | None, bool]] = []
        self._store = ctx._store
        self._writes = cq.put_carried
        monkeypatch.setattr(ctx, "_store", self.store)
        monkeypatch.setattr(cq, "put_carried", self.write)

    def store(self, *args: Any, **kwargs: Any) -> Any:
        if self.other is not None:
            other, self.other = self.other, None
            self.result = other()
        return self._store(*args, **kwargs)

    def write(self, *args: Any, **kwargs: Any) -> bool:
        written = self._writes(*args, **kwargs)
        moved = kwargs["moved"]
        self.stores.append((moved.get("seq"), moved.get("clear_seq"), written))
        return written


def test_the_read_that_stores_second_answers_the_winners_state(
    stack: Any, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both reads start from no stored state over the same history; B stores first, A's
    conditional write finds the state moved and A assembles again with B's state."""
    cid = _conversation(owner, range(1, FIRST_TURNS + 1))
    race = Interleaved(monkeypatch, lambda: _read(owner, cid))
    a = _read(owner, cid)
    b = race.result
    assert b is not None and b["removed_message_ids"] and b["cleared_tool_result_ids"]
    assert _same(a) == _same(b)
    stored = _stored(cid)
    assert stored.version == 1  # one write: B's
    assert [written for *_, written in race.stores] == [True, False]  # A's lost
    assert race.stores[0][:2] == (stored.seq, stored.clear_seq)
    assert _same(_read(owner, cid)) == _same(a)  # the next read keeps it, moving nothing
    assert _stored(cid) == stored


def test_a_read_of_an_older_history_never_overwrites_a_newer_state(
    stack: Any, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A assembles the history of 30 turns and would store its cut; before it stores, 3
    turns are appended and B stores the cut of 33. A's write must not replace B's state
    with its older one: A reads again and answers what B answered."""
    cid = _conversation(owner, range(1, FIRST_TURNS + 1))

    def append_then_read() -> dict[str, Any]:
        _append(owner, cid, range(FIRST_TURNS + 1, FIRST_TURNS + 4))
        return _read(owner, cid)

    race = Interleaved(monkeypatch, append_then_read)
    a = _read(owner, cid)
    b = race.result
    assert b is not None
    assert b["original_message_count"] == 4 * (FIRST_TURNS + 3)
    stored = _stored(cid)
    (b_seq, b_line, b_written), (a_seq, a_line, a_written) = race.stores
    assert (a_seq, a_line) != (b_seq, b_line)  # A would have stored an older state
    assert b_written and not a_written
    assert (b_seq, b_line) == (stored.seq, stored.clear_seq)  # B's state stays
    assert _same(a) == _same(b)  # A answered for the newer history, with B's state
    assert _same(_read(owner, cid)) == _same(b)
