"""A window read never starts inside a tool chain (docs/history.md#history-strategies: never a
result without its call). The invariant harness found a read whose window began at a pinned tool
result, its call left unread: the pinned result came without its call and was dropped
(tests/engine/assembly/harness, docs/harness.md decision (d))."""

from __future__ import annotations

from typing import Any

from store import message_cache
from store.db import read_session
from store.history_tables import Conversation


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def test_a_window_that_starts_inside_a_chain_starts_at_its_call(app_client: Any) -> None:
    messages = [
        {"role": "user", "content": "Fix the parser."},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": "tests: 3 failed"},
        {"role": "tool", "tool_call_id": "c2", "content": "parser.py line 42", "pinned": True},
        {"role": "assistant", "content": "Found it."},
        {"role": "user", "content": "Go on."},
    ]
    cid = app_client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text
    with read_session() as session:
        conv = session.get(Conversation, cid)
        assert conv is not None
        for through in (2, 3):  # the window's edge right after the call, then mid-chain
            read = message_cache.load_context_messages(
                session, conversation=conv, through_seq=through, with_removed=True
            )
            roles = [m.role for m in read.messages]
            assert roles[:4] == ["assistant", "tool", "tool", "assistant"], roles
            assert [m.tool_call_id for m in read.messages[1:3]] == ["c1", "c2"]
            assert read.messages[2].pinned
            assert read.messages[0].seq == 2  # from the chain's call on
            assert len(read.removed_before) == 1  # the task, before the chain: not read
