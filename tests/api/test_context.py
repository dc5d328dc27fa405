"""GET /v1/conversations/{id}/context in-process: budget, invariants, SDK types, options."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.history_data import (
    agent_history,
    check_openai_invariants,
    marker_of,
    validate_with_sdks,
)

SYSTEM = "You are a careful coding agent."


def _load(client: Any, messages: list[dict[str, Any]], **conv: Any) -> str:
    cid = client.post("/v1/conversations", json={"system_prompt": SYSTEM, **conv}).json()["id"]
    for i in range(0, len(messages), 5000):
        r = client.post(
            f"/v1/conversations/{cid}/messages", json={"messages": messages[i : i + 5000]}
        )
        assert r.status_code == 201, r.text
    return cid


def _context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture
def small_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16000)


@pytest.fixture
def history() -> list[dict[str, Any]]:
    return agent_history(2000, pinned=4, system_every=700)


def test_2000_messages_small_window_budget_and_invariants(
    small_window: None, app_client: Any, history: list[dict[str, Any]]
) -> None:
    cid = _load(app_client, history, model="gpt-4o")
    answer = _context(app_client, cid)
    assert answer["context_limit"] == 16000
    assert answer["strategy"] == "token_budget" and answer["filtered"] is True
    assert answer["format"] == "openai"
    assert answer["original_message_count"] == len(history)
    assert answer["usage_before"] > 1 > answer["usage_after"]
    # the budget formula of docs/context.md#the-rooms: (16000 - min(16384, 16000 // 4)) * 0.8 - 1000
    assert answer["budget_tokens"] == int((16000 - 4000) * 0.8) - 1000
    assert answer["token_count"] <= answer["budget_tokens"] + 50
    sent = answer["messages"]
    # old tool results sent are stubs naming their workspace path
    # (docs/context.md#clearing-old-tool-results-with-hysteresis), pairs whole
    stubs = [m for m in sent if str(m.get("content")).startswith("[Old tool result cleared")]
    assert len(stubs) == len(answer["cleared_tool_result_ids"])
    assert all("/workspace/tool-results/" in m["content"] for m in stubs)
    marked = sum(1 for m in sent if marker_of(m) is not None)
    assert answer["kept_message_count"] == marked + len(stubs)
    assert len(answer["removed_message_ids"]) == len(history) - answer["kept_message_count"]
    check_openai_invariants(sent, history, system_prompt=SYSTEM)
    validate_with_sdks(answer)
    # removed ids are real stored messages, and none of them was sent
    stored = app_client.get(f"/v1/conversations/{cid}/messages", params={"limit": 1000}).json()[
        "data"
    ]
    ids = {m["id"]: m for m in stored}
    removed = set(answer["removed_message_ids"])
    assert all(
        m["seq"] - 1 not in {marker_of(s) for s in sent} for i, m in ids.items() if i in removed
    )
    for key in (
        "conversation_id",
        "model",
        "compaction_id",
        "pending_file_ids",
        "failed_file_ids",
        "duration_ms",
        "usage_before",
        "usage_after",
    ):
        assert key in answer


def test_anthropic_format_validates_against_the_sdk(
    small_window: None, app_client: Any, history: list[dict[str, Any]]
) -> None:
    cid = _load(app_client, history, model="claude-sonnet-4-5")
    answer = _context(app_client, cid, format="anthropic")
    assert answer["format"] == "anthropic"
    assert answer["system"][0]["text"].startswith(SYSTEM)
    assert all(m["role"] in ("user", "assistant") for m in answer["messages"])
    blocks = [b for m in answer["messages"] if isinstance(m["content"], list) for b in m["content"]]
    uses = {b["id"] for b in blocks if b["type"] == "tool_use"}
    results = {b["tool_use_id"] for b in blocks if b["type"] == "tool_result"}
    assert uses and uses == results
    validate_with_sdks(answer)


def test_window_read_matches_the_engine_over_the_whole_history(
    small_window: None, app_client: Any, history: list[dict[str, Any]]
) -> None:
    """The route reads only a window (of messages cached at insert); the engine over every
    message, parsed afresh from the table, must agree."""
    from datetime import UTC, datetime

    from contextq.assembly import Prompts, assemble_context, plan_context
    from contextq.settings import get_settings
    from store import message_cache
    from store.context_queries import get_carried
    from store.db import read_session
    from store.history_tables import Conversation

    cid = _load(app_client, history, model="gpt-4o")
    for params in ({}, {"strategy": "sliding_window", "options": json.dumps({"window_size": 30})}):
        with read_session() as session:  # what this read carries from the previous one
            carried = get_carried(session, conversation_id=cid, model="gpt-4o")
            cut, line = carried.seq, carried.clear_seq
        answer = _context(app_client, cid, **params)
        message_cache.MESSAGE_CACHE.clear()  # the reference is parsed from the table
        message_cache.SEQ_INDEX.clear()
        with read_session() as session:
            conv = session.get(Conversation, cid)
            assert conv is not None
            everything = message_cache.load_context_messages(session, conversation=conv).messages
        plan = plan_context(
            settings=get_settings(),
            now=datetime.now(UTC),
            prompts=Prompts(system_prompt=SYSTEM),
            model="gpt-4o",
            stored_model="gpt-4o",
            strategy=params.get("strategy"),
            options=json.loads(params["options"]) if "options" in params else None,
        )
        cut = cut if "strategy" not in params else None  # a cut point is token_budget's
        expected = assemble_context(everything, plan, cut_seq=cut, clear_seq=line).answer
        assert answer["messages"] == expected["messages"]
        assert answer["removed_message_ids"] == expected["removed_message_ids"]
        assert answer["token_count"] == expected["token_count"]


def test_sliding_window_skip_force_and_noop(app_client: Any) -> None:
    history = agent_history(300, pinned=2)
    cid = _load(app_client, history, model="gpt-4o")
    # far under the 128k window: no filtering unless forced
    plain = _context(app_client, cid)
    assert plain["filtered"] is False and plain["removed_message_ids"] == []
    assert len(plain["messages"]) == len(history) + 1
    forced = _context(
        app_client,
        cid,
        strategy="sliding_window",
        force_filter="true",
        options=json.dumps({"window_size": 10}),
    )
    assert forced["filtered"] is True and forced["strategy"] == "sliding_window"
    check_openai_invariants(forced["messages"], history, system_prompt=SYSTEM)
    assert len(forced["messages"]) < 40
    skipped = _context(
        app_client,
        cid,
        force_filter="false",
        skip_filter="true",
        model="gpt-4o",
        options=json.dumps({"reserve_tokens": 10}),
    )
    assert skipped["filtered"] is False and len(skipped["messages"]) == len(history) + 1


def test_unknown_strategy_falls_back_to_noop_and_bad_options_are_422(
    small_window: None, app_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    history = agent_history(400, pinned=1)
    cid = _load(app_client, history, model="gpt-4o")
    with caplog.at_level("WARNING"):
        answer = _context(app_client, cid, strategy="telepathy")
    assert answer["strategy"] == "noop" and answer["filtered"] is False
    # nothing filtered, but never past the hard room (16000 - 4000): the oldest left out
    assert answer["token_count"] <= 12_000 < answer["usage_before"] * 16_000
    assert any("hard room" in w for w in answer["warnings"])
    assert any("unknown strategy 'telepathy'" in w for w in answer["warnings"])
    logged = [r.getMessage() for r in caplog.records if "telepathy" in r.getMessage()]
    assert logged and cid in logged[0]  # the warning names the conversation
    for options, field in (
        ("{not json", "options"),
        ("[1]", "options"),
        ('{"window_size": 0}', "options.window_size"),
    ):
        r = app_client.get(
            f"/v1/conversations/{cid}/context",
            params={"strategy": "sliding_window", "options": options},
        )
        assert r.status_code == 422, r.text
        assert field in [".".join(map(str, e["loc"][1:])) for e in r.json()["detail"]]
    r = app_client.get(f"/v1/conversations/{cid}/context", params={"format": "xml"})
    assert r.status_code == 422
    r = app_client.get(
        f"/v1/conversations/{cid}/context", params={"force_filter": "true", "skip_filter": "true"}
    )
    assert r.status_code == 422


def test_conversation_strategy_and_options_are_used(small_window: None, app_client: Any) -> None:
    history = agent_history(500, pinned=0)
    cid = _load(
        app_client,
        history,
        model="gpt-4o",
        context_strategy="sliding_window",
        context_options={"window_size": 12},
    )
    answer = _context(app_client, cid)
    assert answer["strategy"] == "sliding_window"
    assert answer["kept_message_count"] <= 12 + 1  # + the stored system message
    check_openai_invariants(answer["messages"], history, system_prompt=SYSTEM)


def test_context_after_a_compaction_uses_its_summary(small_window: None, app_client: Any) -> None:
    """The compaction function run directly (the queue path is in tests/integration)."""
    from contextq.settings import get_settings
    from service.history import run_compaction

    history = agent_history(1500, pinned=3)
    cid = _load(app_client, history, model="gpt-4o")
    result = run_compaction(conversation_id=cid, job_id=None, settings=get_settings())
    assert result["method"] == "summary", result
    compactions = app_client.get(f"/v1/conversations/{cid}/compactions").json()["data"]
    assert len(compactions) == 1 and compactions[0]["id"] == result["compaction_id"]
    answer = _context(app_client, cid)
    assert answer["compaction_id"] == result["compaction_id"]
    summary = [m for m in answer["messages"] if "<conversation_summary>" in str(m.get("content"))]
    assert len(summary) == 1
    sent = {marker_of(m) for m in answer["messages"]}
    through = compactions[0]["through_seq"]
    for i, m in enumerate(history):  # covered pinned messages (and their chains) stay verbatim
        if m.get("pinned"):
            assert i in sent
            for call in m.get("tool_calls") or ():
                assert any(s.get("tool_call_id") == call["id"] for s in answer["messages"])
    covered_unpinned = [
        i
        for i, m in enumerate(history[:through])
        if not m.get("pinned") and m["role"] != "system" and m["role"] != "tool"
    ]
    assert not sent & set(covered_unpinned[-50:])
    check_openai_invariants(
        [m for m in answer["messages"] if "<conversation_summary>" not in str(m.get("content"))],
        history,
        system_prompt=SYSTEM,
    )
    validate_with_sdks(answer)
    validate_with_sdks(_context(app_client, cid, format="anthropic"))


def test_pinning_an_old_message_shows_up_in_the_next_context(
    small_window: None, app_client: Any
) -> None:
    """Parsed messages are cached per process; the pinned flag is always read fresh."""
    history = agent_history(1200, pinned=0)
    cid = _load(app_client, history, model="gpt-4o")
    first = _context(app_client, cid)
    old_id = first["removed_message_ids"][5]
    old = app_client.get(f"/v1/conversations/{cid}/messages", params={"limit": 20}).json()
    old_seq = next(m["seq"] for m in old["data"] if m["id"] == old_id)
    assert (
        app_client.patch(
            f"/v1/conversations/{cid}/messages/{old_id}", json={"pinned": True}
        ).status_code
        == 200
    )
    second = _context(app_client, cid)
    assert old_id not in second["removed_message_ids"]
    assert old_seq - 1 in {marker_of(m) for m in second["messages"]}
    check_openai_invariants(second["messages"], history, system_prompt=SYSTEM)
    app_client.patch(f"/v1/conversations/{cid}/messages/{old_id}", json={"pinned": False})
    third = _context(app_client, cid)
    assert old_id in third["removed_message_ids"]
    # new messages after a cached read are read too
    more = agent_history(30, seed=99, pinned=0)[1:]
    app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": more})
    fourth = _context(app_client, cid)
    assert fourth["messages"][-1]["content"] == more[-1]["content"]
    assert fourth["original_message_count"] == len(history) + len(more)


def test_conversation_tools_come_off_the_budget_whatever_the_strategy(app_client: Any) -> None:
    """Tools are sent with every request: their tokens shrink the budget; they are not a
    strategy option (a sliding_window or noop conversation with tools used to get a 422)."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": "Runs a command in the workspace and returns its output.",
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            },
        }
        for i in range(20)
    ]
    history = agent_history(60, pinned=1)
    plain = _context(app_client, _load(app_client, history, model="gpt-4o"))
    for strategy in ("token_budget", "sliding_window", "noop"):
        cid = _load(app_client, history, model="gpt-4o", context_strategy=strategy, tools=tools)
        answer = _context(app_client, cid, force_filter="true")
        assert answer["strategy"] == strategy
        assert answer["budget_tokens"] < plain["budget_tokens"]
        check_openai_invariants(answer["messages"], history, system_prompt=SYSTEM)


def test_a_failing_strategy_sends_the_whole_history_not_the_window(
    small_window: None, app_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail-open (docs/history.md#history-strategies): the read planned a window of the newest
    messages; when the strategy raises, everything is read and sent, and the error is reported."""
    from contextq.history import filtering

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    history = agent_history(800, pinned=1)
    cid = _load(app_client, history, model="gpt-4o")
    planned = _context(app_client, cid)
    assert planned["filtered"] is True and planned["removed_message_ids"]
    monkeypatch.setattr(filtering, "token_budget", broken)
    answer = _context(app_client, cid)
    assert answer["error"] == "RuntimeError: boom" and answer["filtered"] is False
    # everything that fits the hard room (16000 - 4000), not the budget's window
    assert len(answer["removed_message_ids"]) < len(planned["removed_message_ids"])
    assert planned["token_count"] < answer["token_count"] <= 12_000
    assert any("hard room" in w for w in answer["warnings"])
    check_openai_invariants(answer["messages"], history, system_prompt=SYSTEM)
