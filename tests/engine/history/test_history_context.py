"""History part of the ready-to-send context: system → summary → filtered history."""

from __future__ import annotations

import logging
import re

import pytest

from contextq.assembly import build_history_context
from contextq.errors import ValidationFailed
from contextq.history import CompactionView, compact, visible_history
from contextq.history.memory import HierarchicalMemory
from contextq.settings import Settings
from tests.engine.assembly.test_formats import assert_valid_anthropic, assert_valid_openai
from tests.engine.history.builders import agent_history

SMALL = Settings(MAX_CONTEXT_TOKENS=6_000)


def test_context_fits_and_reports(caplog: pytest.LogCaptureFixture) -> None:
    msgs = agent_history(300, seed=21)
    msgs[10].pinned = True
    with caplog.at_level(logging.INFO, logger="contextq.history"):
        ctx = build_history_context(
            msgs,
            settings=SMALL,
            conversation_id="conv-1",
            model="gpt-4o",
            system_prompt="Be precise.",
        )
    r = ctx.report
    assert r["filtered"] and r["strategy"] == "token_budget"
    assert r["context_limit"] == 6_000 and r["model"] == "gpt-4o" and r["provider"] == "openai"
    assert r["token_count"] <= r["budget_tokens"]
    assert r["usage_before"] > 0.8 > r["usage_after"]
    assert r["kept_message_count"] + len(r["removed_message_ids"]) == len(msgs)
    assert msgs[10].id not in r["removed_message_ids"]
    assert ctx.messages[0] == {"role": "system", "content": "Be precise."}
    assert ctx.messages[1]["content"] == "You are a careful coding agent."  # history system kept
    assert_valid_openai(ctx.messages)
    line = next(rec.getMessage() for rec in caplog.records if "[ContextFilter]" in rec.getMessage())
    assert re.fullmatch(
        r"\[ContextFilter\] Filtered conversation conv-1: \d+ → \d+ messages using token_budget"
        r" in \d+\.\dms(; \d+ old tool results cleared \(listed in the answer\))?",
        line,
    )
    given = build_history_context(
        msgs,
        settings=SMALL,
        model="gpt-4o",
        system_prompt="Be precise.",
        history_tokens=sum(m.token_count or 0 for m in msgs),
    )
    assert given.messages == ctx.messages
    assert given.report["removed_message_ids"] == r["removed_message_ids"]


def test_small_history_is_not_filtered() -> None:
    msgs = agent_history(3, seed=1)
    ctx = build_history_context(
        msgs, settings=Settings(), model="claude-sonnet-4-5", format="anthropic"
    )
    assert not ctx.report["filtered"]
    assert ctx.report["kept_message_count"] == len(msgs)
    assert ctx.report["removed_message_ids"] == []
    assert ctx.system is not None
    assert [b["text"] for b in ctx.system] == ["You are a careful coding agent."]
    assert ctx.system[-1]["cache_control"] == {"type": "ephemeral"}
    assert_valid_anthropic(ctx.system, ctx.messages)


def test_compaction_summary_stands_in_for_covered_messages() -> None:
    msgs = agent_history(200, seed=22)
    msgs[5].pinned = True
    out = compact(msgs, None, Settings(), target_tokens=2_000)
    assert out is not None
    view = CompactionView(summary=out.summary, through_seq=out.through_seq, id="cmp-1")
    visible = visible_history(msgs, out.through_seq)
    assert msgs[0] in visible and msgs[5] in visible  # system and pinned stay verbatim
    assert all(m.seq > out.through_seq or m.pinned or m.role == "system" for m in visible)
    ctx = build_history_context(
        msgs, settings=Settings(), model="gpt-4o", system_prompt="Be precise.", compaction=view
    )
    assert ctx.report["compaction_id"] == "cmp-1"
    assert not ctx.report["filtered"]  # the summary made it fit
    assert [m["role"] for m in ctx.messages[:2]] == ["system", "system"]
    summary = ctx.messages[2]
    assert summary["role"] == "user" and "<conversation_summary>" in summary["content"]
    assert out.summary in summary["content"]
    assert_valid_openai(ctx.messages)
    system, turns = (
        build_history_context(
            msgs,
            settings=Settings(),
            model="claude-sonnet-4-5",
            compaction=view,
            format="anthropic",
        ).system,
        None,
    )
    assert system is not None and system[0]["text"] == "You are a careful coding agent."
    anthropic = build_history_context(
        msgs,
        settings=SMALL,
        model="claude-sonnet-4-5",
        compaction=view,
        format="anthropic",
        force_filter=True,
    )
    turns = anthropic.messages
    assert "<conversation_summary>" in turns[0]["content"][0]["text"]
    assert_valid_anthropic(anthropic.system, turns)


def test_tools_take_budget_and_hierarchical_memory_block() -> None:
    msgs = agent_history(120, seed=23)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "x " * 300,
                "parameters": {"type": "object"},
            },
        }
    ]
    plain = build_history_context(msgs, settings=SMALL, model="gpt-4o", force_filter=True)
    with_tools = build_history_context(
        msgs, settings=SMALL, model="gpt-4o", tools=tools, force_filter=True
    )
    assert with_tools.report["budget_tokens"] < plain.report["budget_tokens"]
    memory = HierarchicalMemory.from_messages(msgs)
    memory.set_goal("Finish the migration", ["schema", "data"])
    ctx = build_history_context(
        msgs,
        settings=SMALL,
        model="gpt-4o",
        strategy="hierarchical",
        memory=memory,
        force_filter=True,
    )
    assert ctx.report["strategy"] == "hierarchical"
    block = ctx.messages[1]  # after the history's own system message
    assert block["role"] == "user" and block["content"].startswith("GOAL: Finish the migration")
    assert ctx.report["token_count"] <= ctx.report["budget_tokens"]
    assert_valid_openai(ctx.messages)


def test_bad_format_and_options_are_refused() -> None:
    msgs = agent_history(2)
    with pytest.raises(ValidationFailed) as err:
        build_history_context(msgs, settings=Settings(), format="xml")  # type: ignore[arg-type]
    assert err.value.field == "format"
    with pytest.raises(ValidationFailed) as err:
        build_history_context(msgs, settings=Settings(), options={"window": 3})
    assert err.value.field == "options.window"
