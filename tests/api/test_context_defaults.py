"""Issue 11's strategy-level promises through the API (docs/history.md#history-strategies): the
global defaults from settings (conversation fields over them, request parameters over those), the
minimum in sliding_window, ENABLE_AUTO_COMPRESSION, and the hierarchical strategy's options."""

from __future__ import annotations

import json
from typing import Any

from tests.api.history_data import agent_history
from tests.api.test_context_assembly import context, conversation, post


def load(client: Any, n: int, **fields: Any) -> str:
    cid = conversation(client, **fields)
    post(client, cid, *agent_history(n, seed=4, pinned=0))
    return cid


def test_global_defaults_then_the_conversation_then_the_request(
    app_client: Any, make_stack: Any
) -> None:
    make_stack(
        CONTEXT_DEFAULT_STRATEGY="sliding_window",
        CONTEXT_DEFAULT_OPTIONS='{"window_size": 14, "min_messages_to_keep": 0}',
        CONTEXT_DEFAULT_THRESHOLD="0.01",  # filtering starts almost at once
    )
    plain = load(app_client, 120)
    answer = context(app_client, plain)
    assert answer["strategy"] == "sliding_window" and answer["filtered"]
    assert answer["kept_message_count"] <= 14 + 1  # the window (+ the history's system)
    own = load(app_client, 120, context_strategy="token_budget", context_threshold=0.99)
    assert context(app_client, own)["filtered"] is False  # its own threshold: far below
    asked = context(
        app_client,
        own,
        strategy="sliding_window",
        options='{"window_size": 5}',
        force_filter="true",
    )
    assert asked["strategy"] == "sliding_window" and asked["filtered"]
    assert asked["kept_message_count"] >= 10  # MIN_MESSAGES_TO_KEEP holds: 5 < 10


def test_min_messages_to_keep_in_sliding_window(app_client: Any, make_stack: Any) -> None:
    make_stack(MIN_MESSAGES_TO_KEEP=12)
    cid = load(
        app_client, 200, context_strategy="sliding_window", context_options={"window_size": 3}
    )
    answer = context(app_client, cid, force_filter="true")
    assert 12 <= answer["kept_message_count"] <= 12 + 4  # + the system and a whole chain
    fewer = context(
        app_client,
        cid,
        force_filter="true",
        options='{"window_size": 3, "min_messages_to_keep": 0}',
    )
    assert fewer["kept_message_count"] < answer["kept_message_count"]


def test_auto_compression_off_means_no_automatic_filtering(
    app_client: Any, make_stack: Any
) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000, CONTEXT_DEFAULT_THRESHOLD="0.3")
    cid = load(app_client, 200)  # ≈ 8 000 tokens: over 30 % of 16 000, within the hard room
    assert context(app_client, cid)["filtered"] is True
    make_stack(
        MAX_CONTEXT_TOKENS=16_000, CONTEXT_DEFAULT_THRESHOLD="0.3", ENABLE_AUTO_COMPRESSION="false"
    )
    off = context(app_client, cid)
    assert off["filtered"] is False and off["removed_message_ids"] == []
    forced = context(app_client, cid, force_filter="true")
    assert forced["filtered"] is True and forced["removed_message_ids"]


def _recent_lines(answer: dict[str, Any]) -> int:
    block = next(
        m["content"]
        for m in answer["messages"]
        if str(m.get("content", "")).startswith(("GOAL", "KEY", "ERROR", "PREVIOUS", "RECENT"))
    )
    recent = block.split("RECENT ACTIONS", 1)[1]
    return sum(1 for line in recent.splitlines() if line.startswith("- "))


def test_hierarchical_options_take_effect(app_client: Any) -> None:
    cid = load(app_client, 300, context_strategy="hierarchical")
    default = context(app_client, cid, force_filter="true")
    assert default["strategy"] == "hierarchical"
    tight = context(
        app_client,
        cid,
        force_filter="true",
        strategy="hierarchical",
        options=json.dumps({"compression_threshold": 0.5, "recent_actions": 1}),
    )
    assert _recent_lines(tight) < _recent_lines(default)
    bad = app_client.get(
        f"/v1/conversations/{cid}/context",
        params={"strategy": "hierarchical", "options": json.dumps({"compression_threshold": 2})},
    )
    assert bad.status_code == 422 and "options.compression_threshold" in bad.text
