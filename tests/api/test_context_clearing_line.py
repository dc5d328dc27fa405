"""Issue 17 item 3 through the API (docs/context.md#clearing-old-tool-results-with-hysteresis): the
clearing line has hysteresis. When it moves, every result older than the newest `keep_tool_results`
pairs is cleared at once; then it stays put (new results accumulate whole, the cleared prefix is
byte-identical) until the context no longer fits; it is stored beside the cut point per conversation
and model; and every stub's path answers 200 when the answer is returned (written
before answering). Every answer passes `context_checks.check`."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from sqlalchemy import select

from store.context_tables import ContextCutPoint
from store.db import read_session
from tests.api.test_context_tool_results import STUB, _context, _tool_texts, _turn

PATH = re.compile(r"/workspace/(tool-results/[\w-]+\.\w+)")
KEEP = 5


@pytest.fixture
def small_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000)


def _stored_line(cid: str, model: str) -> int | None:
    with read_session() as session:
        return session.execute(
            select(ContextCutPoint.clear_seq).where(
                ContextCutPoint.conversation_id == cid, ContextCutPoint.model == model
            )
        ).scalar_one_or_none()


def _openai_prefix(answer: dict[str, Any]) -> list[dict[str, Any]]:
    turn = max(i for i, m in enumerate(answer["messages"]) if m["role"] == "user")
    return list(answer["messages"][:turn])


def test_the_line_clears_all_at_once_then_stays_put(small_window: None, app_client: Any) -> None:
    cid = app_client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    answers: list[dict[str, Any]] = []
    moves = 0
    for n in range(1, 46):
        r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": _turn(n)})
        assert r.status_code == 201, r.text
        answer = _context(app_client, cid)
        texts = _tool_texts(answer)
        stubs = [t for t in texts if t.startswith(STUB)]
        for stub in stubs:  # every path a stub names answers 200 as the answer returns
            found = PATH.search(stub)
            assert found is not None
            raw = app_client.get(f"/v1/conversations/{cid}/workspace/{found.group(1)}")
            assert raw.status_code == 200, raw.text
        previous = answers[-1] if answers else None
        moved = previous is not None and set(answer["cleared_tool_result_ids"]) - set(
            previous["cleared_tool_result_ids"]
        )
        if moved:  # the line moved: all but the newest KEEP results are stubs at once
            moves += 1
            assert texts[:-KEEP] == stubs and not any(t.startswith(STUB) for t in texts[-KEEP:])
        elif previous is not None and stubs:  # it stayed put: the same stubs, the prefix kept
            assert answer["cleared_tool_result_ids"] == [
                i
                for i in previous["cleared_tool_result_ids"]
                if i not in answer["removed_message_ids"]
            ]
            if not set(answer["removed_message_ids"]) - set(previous["removed_message_ids"]):
                assert answer["messages"][: len(_openai_prefix(previous))] == _openai_prefix(
                    previous
                )
        answers.append(answer)
    assert moves >= 2  # it moved, stayed put, and moved again
    whole_runs = [
        len(_tool_texts(a)) - len(a["cleared_tool_result_ids"])
        for a in answers
        if a["cleared_tool_result_ids"]
    ]
    assert max(whole_runs) > KEEP  # between moves, new results accumulate whole
    # stored beside the cut point, for this model; another model has its own
    line = _stored_line(cid, "gpt-4o")
    stored = {m["id"]: m["seq"] for m in _all_messages(app_client, cid)}
    cleared = answers[-1]["cleared_tool_result_ids"]
    assert line is not None and all(stored[i] < line for i in cleared)
    other = _context(app_client, cid, model="gpt-4o-mini")
    assert other["cleared_tool_result_ids"] and _stored_line(cid, "gpt-4o-mini") is not None
    assert _stored_line(cid, "gpt-4o") == line  # each model's line is its own


def _all_messages(client: Any, cid: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    for _ in itertools.count():
        page = client.get(
            f"/v1/conversations/{cid}/messages", params={"limit": 1000, "cursor": cursor}
        ).json()
        out += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return out
    return out


def test_a_stub_that_cannot_be_written_is_named_in_the_answer(
    make_stack: Any, app_client: Any
) -> None:
    """Over the owner's file quota the cleared results cannot be written: the answer
    still comes (no 5xx), and a warning names each result whose path is missing."""
    make_stack(MAX_CONTEXT_TOKENS=16_000, MAX_FILES_PER_OWNER=3)
    cid = app_client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    answer: dict[str, Any] = {}
    for n in range(1, 30):
        r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": _turn(n)})
        assert r.status_code == 201, r.text
        answer = _context(app_client, cid)
        if answer["cleared_tool_result_ids"]:
            break
    cleared = answer["cleared_tool_result_ids"]
    assert len(cleared) > 3
    missing = [w for w in answer["warnings"] if "could not be written to the workspace" in w]
    assert missing and all(any(i in w for i in cleared) for w in missing)
    assert "MAX_FILES_PER_OWNER" in missing[0]
    assert len(missing) == len(cleared) - 3  # three fitted the quota, one by one
