"""The issue's edge cases of the one budget (docs/context.md#the-rooms,
docs/history.md#a-summary-for-a-smaller-model, docs/context.md#what-is-taken-first), through the
API: a long gpt-4 import never over its budget, an oversized newest tool result shown as a preview,
a summary made for gpt-4o cut to fit gpt-4, the minimum giving way to the budget, and a prefix that
stays put (hysteresis)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from tests.api.history_data import WORDS, agent_history, check_openai_invariants
from tests.api.test_context_assembly import context, conversation, post

SYSTEM = "You are a careful coding agent."


def load(client: Any, messages: list[dict[str, Any]], **fields: Any) -> str:
    cid = conversation(client, system_prompt=SYSTEM, **fields)
    for i in range(0, len(messages), 5000):
        post(client, cid, *messages[i : i + 5000])
    return cid


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_2000_message_gpt4_import_is_never_over_its_budget(app_client: Any, seed: int) -> None:
    history = agent_history(2000, seed=seed, pinned=3)
    cid = load(app_client, history, model="gpt-4")
    for fmt in ("openai", "anthropic"):
        answer = context(app_client, cid, format=fmt)  # checked: ≤ budget, honest count
        assert answer["filtered"] and answer["budget_tokens"] == 3915
        assert answer["token_count"] <= 3915
    check_openai_invariants(context(app_client, cid)["messages"], history, system_prompt=SYSTEM)


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def trajectory(rng: random.Random, big_tokens: int) -> list[dict[str, Any]]:
    """An agent run as imported: one task, many tool calls, and a huge newest result."""
    from contextq.tokens import count_tokens

    out: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the failing test. " + words(rng, 40)}
    ]
    for i in range(60):
        out.append(
            {
                "role": "assistant",
                "content": words(rng, 12),
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                    }
                ],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"call_{i}", "content": words(rng, 18)})
    huge = words(rng, big_tokens)
    while count_tokens(huge) < big_tokens:
        huge += " " + words(rng, 200)
    out[-1]["content"] = "<output>\n" + huge + "\n</output>"
    return out


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_an_oversized_newest_tool_result_is_a_preview_never_past_the_room(
    app_client: Any, fmt: str
) -> None:
    run = trajectory(random.Random(7), 5771)
    cid = load(app_client, run, model="gpt-4")
    stored = app_client.get(f"/v1/conversations/{cid}").json()["total_tokens"]
    assert stored > 8192  # the run alone is over gpt-4's whole window
    answer = context(app_client, cid, format=fmt)
    assert answer["token_count"] <= answer["budget_tokens"] == 3915
    if fmt == "openai":
        last = answer["messages"][-1]
        assert last["role"] == "tool" and last["tool_call_id"] == "call_59"
        text = last["content"]
        assert answer["messages"][1]["content"].startswith("Fix the failing test.")  # the task
    else:
        last = answer["messages"][-1]["content"][0]
        assert last["type"] == "tool_result" and last["tool_use_id"] == "call_59"
        text = last["content"][0]["text"]
    # over TOOL_RESULT_OFFLOAD_TOKENS: the text processor's preview
    # (docs/workspaces.md#large-tool-results), then the line naming the whole result's workspace
    # path and size
    assert text.startswith("<output>") and "[truncated: line_chars: 1000 of" in text
    assert re.search(
        r"\[This is a preview of a large tool result \([\d,]+ tokens, [\d,]+ bytes\)\. "
        r"The full result is at /workspace/tool-results/\w+\.txt\.\]$",
        text,
    )


def test_a_summary_made_for_gpt4o_is_cut_to_fit_gpt4(app_client: Any, make_stack: Any) -> None:
    from contextq.settings import get_settings
    from contextq.tokens import count_tokens
    from service.history import run_compaction

    make_stack(HISTORY_COMPACTION_TARGET_TOKENS=20_000, HISTORY_COMPACTION_MAX_TOKENS=10**9)
    history = agent_history(3000, seed=11, pinned=0, words=60)
    cid = load(app_client, history, model="gpt-4o")
    result = run_compaction(conversation_id=cid, job_id=None, settings=get_settings())
    summary = app_client.get(f"/v1/conversations/{cid}/compactions").json()["data"][0]["summary"]
    assert result["method"] == "summary", result["fallback_reason"]
    assert count_tokens(summary) > 8192  # over all of gpt-4
    post(app_client, cid, {"role": "user", "content": "U and now?"})
    whole = context(app_client, cid)  # gpt-4o: the summary fits whole
    assert any(summary in str(m["content"]) for m in whole["messages"])
    for fmt in ("openai", "anthropic"):
        small = context(app_client, cid, model="gpt-4", format=fmt)
        assert small["token_count"] <= small["budget_tokens"] == 3915
        texts = [
            b.get("text", "") if isinstance(b, dict) else ""
            for m in small["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        ]
        cut = next(t for t in texts if "<conversation_summary>" in t)
        assert "[cut to fit" in cut and summary not in cut
        assert any("summary" in w and "cut" in w for w in small["warnings"])


def test_the_minimum_gives_way_to_the_budget_with_a_warning(app_client: Any) -> None:
    rng = random.Random(3)
    history = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"<#{i}> " + words(rng, 600)}
        for i in range(30)
    ]
    cid = load(app_client, history, model="gpt-4")
    answer = context(app_client, cid)
    assert answer["kept_message_count"] < 10
    assert any("MIN_MESSAGES_TO_KEEP (10) gave way" in w for w in answer["warnings"])


def test_a_prefix_that_stays_put_over_30_turns_past_the_budget(app_client: Any) -> None:
    """Between cuts, what an answer holds before its newest turn starts the next answer
    byte for byte (docs/context.md#the-cut-point-and-a-prefix-that-stays-put): ≥ 80% of turns keep
    the previous turn's prefix."""
    rng = random.Random(5)
    cid = load(app_client, agent_history(400, seed=9, pinned=0), model="gpt-4")
    kept = 0
    previous: list[dict[str, Any]] | None = None
    for turn in range(31):
        post(
            app_client,
            cid,
            {"role": "user", "content": f"turn {turn} " + words(rng, 30)},
        )
        answer = context(app_client, cid)
        messages = answer["messages"]
        if previous is not None and messages[: len(previous)] == previous:
            kept += 1
        previous = messages[:-1]  # everything before this turn's user message
        post(app_client, cid, {"role": "assistant", "content": words(rng, 40)})
    assert kept >= 24, kept  # ≥ 80% of 30
    anthropic = context(app_client, cid, format="anthropic")
    marked = [b for m in anthropic["messages"] for b in m["content"] if "cache_control" in b] + [
        b for b in anthropic["system"] if "cache_control" in b
    ]
    assert len(marked) == 2
    assert 0 < anthropic["stable_prefix_tokens"] < anthropic["token_count"]
