"""Counts for closed tokenizers through the API (issue 21, docs/token-counting.md): a context for a
model whose tokenizer is not published says it is calibrated, with its factors, is never below
the open count times the lowest published factor, and is recounted from its own fields;
an OpenAI model's is exact; the budget of a Claude model holds less text accordingly.
Every answer passes `context_checks.check` (SDK types, the recount, the breakdown)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextq.calibration import CLAUDE, CLAUDE_2026, GEMINI
from contextq.history import count_message_tokens
from contextq.tokens import get_encoding
from service.history.compaction import compaction_threshold
from store.history_tables import Conversation
from tests.api.history_data import agent_history
from tests.api.test_context_assembly import context, conversation, post

# the lowest published figure for Claude's count over tiktoken (Anthropic: "~15-20%")
LOWEST_PUBLISHED_FACTOR = 1.15

TURNS = [
    {"role": "user", "content": "Where is the retry logic, and why does it not back off?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "worker/retry.py"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "def retry(call, attempts=3):\n    for i in range(attempts):\n"
        "        try:\n            return call()\n        except TimeoutError:\n"
        "            time.sleep(1)\n",
    },
    {"role": "assistant", "content": "It sleeps one second each time; it should double."},
    {"role": "user", "content": "设置里还有一个超时参数，请一起检查。"},
]


def open_count(answer: dict[str, Any]) -> int:
    """The answer's messages counted in its open encoding, no calibration (OpenAI form)."""
    enc = get_encoding(answer["token_count_encoding"])
    return sum(
        len(enc.encode_ordinary(json.dumps(m, ensure_ascii=False, separators=(",", ":"))))
        for m in answer["messages"]
    )


def test_claude_is_calibrated_beside_gpt_4o_exact(app_client: Any) -> None:
    cid = conversation(app_client, model="claude-sonnet-4-5", system_prompt="You fix code.")
    post(app_client, cid, *TURNS)
    claude = context(app_client, cid)
    assert claude["token_count_method"] == "calibrated"
    assert claude["token_count_encoding"] == "cl100k_base"
    assert claude["token_count_family"] == "claude"
    assert claude["token_count_factors"] == CLAUDE.factors
    exact = open_count(claude)
    assert claude["token_count"] >= exact * LOWEST_PUBLISHED_FACTOR
    assert claude["token_count"] <= exact * max(CLAUDE.factors.values()) + len(claude["messages"])

    gpt = context(app_client, cid, model="gpt-4o")
    assert gpt["token_count_method"] == "exact"
    assert gpt["token_count_encoding"] == "o200k_base"
    assert gpt["token_count_family"] is None and gpt["token_count_factors"] is None
    assert gpt["token_count"] == open_count(gpt)  # what OpenAI bills, nothing added
    assert gpt["messages"] == claude["messages"]  # the same list, counted two ways


def test_the_factor_follows_the_model(app_client: Any) -> None:
    cid = conversation(app_client, model="claude-sonnet-4-5", system_prompt="You fix code.")
    post(app_client, cid, *TURNS)
    sonnet = context(app_client, cid, format="anthropic")
    opus = context(app_client, cid, model="claude-opus-4-7", format="anthropic")
    gemini = context(app_client, cid, model="gemini-2.5-pro")
    assert opus["token_count_family"] == "claude-2026"
    assert opus["token_count_factors"] == CLAUDE_2026.factors
    assert opus["token_count"] > sonnet["token_count"]  # the new tokenizer counts more
    assert gemini["token_count_family"] == "gemini"
    assert gemini["token_count_factors"] == GEMINI.factors


@pytest.fixture
def same_window(make_stack: Any) -> None:
    make_stack(MAX_CONTEXT_TOKENS=16_000)  # gpt-4-turbo and Claude get the same budget


def test_a_claude_budget_holds_less_text(same_window: None, app_client: Any) -> None:
    history = agent_history(400, pinned=2)
    cid = conversation(app_client, model="claude-sonnet-4-5", system_prompt="You fix code.")
    for i in range(0, len(history), 200):
        post(app_client, cid, *history[i : i + 200])
    claude = context(app_client, cid)
    gpt4 = context(app_client, cid, model="gpt-4-turbo")  # cl100k too, exact
    assert claude["budget_tokens"] == gpt4["budget_tokens"] == int((16_000 - 4_000) * 0.8) - 1000
    assert claude["filtered"] and gpt4["filtered"]
    assert claude["token_count"] <= claude["budget_tokens"]
    # the same budget holds less cl100k text: at most the budget over the smallest factor
    assert open_count(claude) * min(CLAUDE.factors.values()) <= claude["budget_tokens"]
    assert open_count(claude) < open_count(gpt4)
    assert claude["kept_message_count"] < gpt4["kept_message_count"]


def test_the_trigger_counts_stored_totals_at_the_largest_factor(
    same_window: None, app_client: Any
) -> None:
    """A history that fills about 70 % of the window in cl100k is over the 0.8 threshold for
    Claude (x1.35 at most) and under it for gpt-4-turbo: only Claude's is filtered."""
    history = agent_history(400, pinned=0)[1:]
    total, n = 0, 0
    while total < 0.75 * 16_000:  # the raw dicts count a little more than stored
        total += count_message_tokens(history[n], "gpt-4-turbo")
        n += 1
    cid = conversation(app_client, model="claude-sonnet-4-5")
    post(app_client, cid, *history[:n])
    stored = app_client.get(f"/v1/conversations/{cid}").json()["total_tokens"]
    assert stored < 0.8 * 16_000 <= stored * 1.35
    gpt4 = context(app_client, cid, model="gpt-4-turbo")
    claude = context(app_client, cid)
    assert not gpt4["filtered"] and claude["filtered"]
    assert claude["usage_before"] >= 0.8 > gpt4["usage_before"]


def test_the_compaction_threshold_is_window_sized_in_stored_counts() -> None:
    from contextq.settings import Settings

    settings = Settings(MAX_CONTEXT_TOKENS=100_000, HISTORY_COMPACTION_MAX_TOKENS=1_000_000)
    gpt4 = compaction_threshold(Conversation(model="gpt-4o", owner_id="o"), settings)
    claude = compaction_threshold(Conversation(model="claude-sonnet-4-5", owner_id="o"), settings)
    assert gpt4 == 80_000  # 0.8 of the window
    assert claude == 80_000 * 100 // 135  # what stays within it at Claude's largest factor
