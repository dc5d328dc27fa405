"""The plan of a context read: decided once from stored totals, used for loading AND
assembling (a window read must give what the whole history gives)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from itertools import accumulate
from typing import Any

import pytest

from contextq.assembly import (
    ContextPlan,
    Prompts,
    assemble_context,
    build_history_context,
    plan_context,
)
from contextq.catalog import resolve_model
from contextq.errors import ValidationFailed
from contextq.history import (
    CompactionView,
    Message,
    compute_budget,
    plan_read,
)
from contextq.settings import Settings
from contextq.tokens import count_tokens
from tests.engine.history.builders import agent_history

SMALL = Settings(MAX_CONTEXT_TOKENS=8_000)
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
PROMPTS = Prompts(system_prompt="Be precise.", use_default=False, sections=False)


def _with_read(plan: ContextPlan, read: Any) -> ContextPlan:
    return replace(plan, read=read)


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"tool_{i}",
            "description": "Reads a file of the repository and returns its text. " * 3,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
    for i in range(12)
]


def _history(turns: int) -> list[Message]:
    messages = agent_history(turns, seed=5)
    for seq, m in enumerate(messages, start=1):  # stored seqs start at 1
        m.seq = seq
    return messages


def _window_read(messages: list[Message], start: int) -> list[Message]:
    """What the service loads for a window from `start`: earlier system messages (this
    history pins nothing), then every message from `start` on."""
    return [m for m in messages if m.seq < start and m.role == "system"] + [
        m for m in messages if m.seq >= start
    ]


def _first_seq_past(messages: list[Message], tokens: int) -> int | None:
    totals = accumulate(m.token_count or 0 for m in messages)
    return next((m.seq for m, cum in zip(messages, totals, strict=True) if cum > tokens), None)


@pytest.mark.parametrize(
    ("strategy", "options", "tools"),
    [
        ("token_budget", None, None),
        ("token_budget", None, TOOLS),  # the tools' tokens shrink the budget: same plan for both
        ("sliding_window", {"window_size": 15}, TOOLS),
    ],
)
def test_a_window_read_gives_what_the_whole_history_gives(
    strategy: str, options: dict[str, Any] | None, tools: list[dict[str, Any]] | None
) -> None:
    messages = _history(400)
    total = sum(m.token_count or 0 for m in messages)
    context_plan = plan_context(
        settings=SMALL,
        now=NOW,
        prompts=PROMPTS,
        model="gpt-4o",
        history_tokens=total,
        strategy=strategy,
        options=options,
        tools=tools,
    )
    plan = context_plan.read
    assert plan.load == "window" and plan.filter.runs is True
    window = plan.window
    assert window is not None
    first_past = None
    if window.past_tokens is not None:
        assert window.past_tokens == total - plan.filter.budget.budget_tokens
        first_past = _first_seq_past(messages, window.past_tokens)
    start = window.start(last_seq=messages[-1].seq, first_seq_past=first_past)
    assert start is not None and start > 100  # only the newest part is read
    read = _window_read(messages, start)
    windowed = assemble_context(read, context_plan).answer
    whole = assemble_context(messages, context_plan).answer
    assert windowed["messages"] == whole["messages"]
    assert windowed["token_count"] == whole["token_count"]
    assert windowed["filtered"] and windowed["error"] is None
    removed_before = [m.id for m in messages if m.seq < start and m.role != "system"]
    assert removed_before + windowed["removed_message_ids"] == whole["removed_message_ids"]


def test_the_budget_is_the_engines_own_with_tools_and_a_separate_input_limit() -> None:
    settings = Settings()
    plan = plan_read(settings=settings, model="gpt-5", tools=TOOLS, history_tokens=10)
    limits = resolve_model("gpt-5", settings)
    assert limits.max_input_tokens is not None and limits.max_input_tokens < (
        limits.context_window - min(limits.max_output_tokens, limits.context_window // 4)
    )
    serialised = json.dumps(TOOLS, ensure_ascii=False, separators=(",", ":"))
    tool_tokens = count_tokens(serialised, limits.encoding)
    assert plan.filter.budget == compute_budget(
        context_limit=limits.context_window,
        model_max_output=limits.max_output_tokens,
        tool_definition_tokens=tool_tokens,
        max_input_tokens=limits.max_input_tokens,
    )
    explicit = plan_read(
        settings=settings, model="gpt-5", tools=TOOLS, options={"tool_definition_tokens": 7}
    )
    assert explicit.filter.budget.tool_definition_tokens == 7


def test_what_to_load() -> None:
    small = plan_read(settings=SMALL, model="gpt-4o", history_tokens=100)
    assert small.load == "all" and small.filter.runs is False and small.window is None
    skipped = plan_read(settings=SMALL, model="gpt-4o", history_tokens=10**6, skip_filter=True)
    assert skipped.load == "all" and skipped.filter.runs is False
    forced = plan_read(settings=SMALL, model="gpt-4o", history_tokens=100, force_filter=True)
    assert forced.filter.runs is True and forced.window is None  # everything fits the budget
    compacted = plan_read(
        settings=SMALL,
        model="gpt-4o",
        history_tokens=10**6,
        compaction=CompactionView(summary="s", through_seq=40, id="c1"),
    )
    assert compacted.load == "after_compaction" and compacted.window is None
    assert compacted.filter.runs is None  # decided on the loaded messages
    assert compacted.filter.fixed_tokens > 0  # the summary goes with the history
    hierarchical = plan_read(
        settings=SMALL, model="gpt-4o", history_tokens=10**6, strategy="hierarchical"
    )
    assert hierarchical.filter.runs is True and hierarchical.load == "all"
    unknown = plan_read(settings=SMALL, model="gpt-4o", history_tokens=10**6, strategy="magic")
    assert unknown.filter.strategy == "noop" and unknown.load == "all"
    assert unknown.filter.warnings and "magic" in unknown.filter.warnings[0]
    off = plan_read(
        settings=Settings(MAX_CONTEXT_TOKENS=8_000, ENABLE_AUTO_COMPRESSION=False),
        model="gpt-4o",
        history_tokens=10**6,
    )
    assert off.filter.runs is False and off.load == "all"


def test_request_overrides_the_conversation() -> None:
    stored = {"default_strategy": "sliding_window", "default_options": {"window_size": 3}}
    plan = plan_read(settings=SMALL, history_tokens=10**6, **stored)  # type: ignore[arg-type]
    assert plan.filter.strategy == "sliding_window"
    assert plan.filter.arguments["window_size"] == 3
    asked = plan_read(settings=SMALL, history_tokens=10**6, strategy="token_budget", **stored)  # type: ignore[arg-type]
    assert asked.filter.strategy == "token_budget"  # the conversation's options do not apply
    with pytest.raises(ValidationFailed) as bad:
        plan_read(settings=SMALL, options={"window_size": 0}, **stored)  # type: ignore[arg-type]
    assert bad.value.field == "options.window_size"
    with pytest.raises(ValidationFailed):
        plan_read(settings=SMALL, format="xml")
    with pytest.raises(ValidationFailed):
        plan_read(settings=SMALL, force_filter=True, skip_filter=True)


def test_fail_open_plan_reads_everything_unfiltered() -> None:
    plan = plan_read(settings=SMALL, model="gpt-4o", history_tokens=10**6)
    assert plan.load == "window"
    fallback = plan.fail_open()
    assert fallback.load == "all" and fallback.filter.runs is False
    assert fallback.filter.budget == plan.filter.budget
    context_plan = plan_context(settings=SMALL, now=NOW, prompts=PROMPTS, model="gpt-4o")
    small = _history(10)
    answer = assemble_context(small, _with_read(context_plan, fallback)).answer
    assert answer["kept_message_count"] == len(small) and not answer["filtered"]
    # never past the hard room, even unfiltered: the oldest left out, with a warning
    big = _history(50)
    answer = assemble_context(big, _with_read(context_plan, fallback)).answer
    assert not answer["filtered"] and answer["kept_message_count"] < len(big)
    assert answer["token_count"] <= plan.filter.budget.hard_limit_tokens
    assert any("hard room" in w for w in answer["warnings"])


def test_tools_with_strategies_without_budget_options() -> None:
    """Tools come off the budget; they are not an option, so any strategy takes them."""
    messages = _history(30)
    for strategy in ("sliding_window", "noop", "hierarchical"):
        context = build_history_context(
            messages, settings=SMALL, model="gpt-4o", strategy=strategy, tools=TOOLS
        )
        assert context.report["strategy"] == strategy
        assert context.report["error"] is None
