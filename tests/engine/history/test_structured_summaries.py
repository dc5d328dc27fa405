"""Structured summaries (docs/history.md#compaction): fixed sections, memory-backed ones verbatim,
errors as facts (a traceback is one error), no markup, paths touched, the budget spent, and
fit_summary cutting a summary for a smaller model."""

from __future__ import annotations

import json
import re

import pytest

from contextq.history import ExtractiveSummarizer, Message
from contextq.history.harvest import find_paths
from contextq.history.memory import HierarchicalMemory
from contextq.history.retention import fit_summary
from contextq.history.summarizers import SUMMARY_PROMPT, summary_request
from contextq.history.summary_format import (
    SECTIONS,
    facts_from_memory,
    facts_from_summary,
    parse_summary,
)
from contextq.tokens import count_tokens
from tests.engine.history.builders import agent_history, assistant, counted, user

TRACEBACK = (
    "Traceback (most recent call last):\n"
    + "".join(
        f'  File "/usr/lib/python3/site-packages/lib/mod{i}.py", line {10 + i}, in step{i}\n'
        f"    value = step{i + 1}(value)\n"
        for i in range(69)
    )
    + '  File "src/billing/invoice.py", line 88, in total\n'
    + "    return sum(line.amount for line in lines)\n"
    + "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
)


def tool_call(seq: int, call_id: str, name: str, **arguments: object) -> Message:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return Message(role="assistant", tool_calls=[call], seq=seq, id=f"m{seq}", kind="tool_call")


def tool_result(seq: int, call_id: str, text: str, *, error: bool = False) -> Message:
    return Message(
        role="tool",
        tool_call_id=call_id,
        content=text,
        seq=seq,
        id=f"m{seq}",
        kind="error" if error else "observation",
    )


def swe_session() -> list[Message]:
    """An SWE-agent-like run: bash calls whose outputs are wrapped in markup, a long
    traceback three times, file listings and code."""
    msgs: list[Message] = [
        user(1, "The invoice total crashes when a line has no amount. Fix it in the billing app."),
    ]
    seq = 2
    code = "\n".join(
        f"    def amount_{k}(self):\n        return self._cents[{k}]" for k in range(30)
    )
    for i in range(24):
        call_id = f"c{i}"
        if i % 6 == 2:
            msgs.append(tool_call(seq, call_id, "bash", command="python -m pytest tests/billing"))
            output = f"<returncode>1</returncode>\n<output>\n{TRACEBACK}</output>"
            msgs.append(tool_result(seq + 1, call_id, output, error=True))
        else:
            msgs.append(tool_call(seq, call_id, "read_file", path=f"src/billing/part{i}.py"))
            output = f"<returncode>0</returncode>\n<output>\n{code}\n</output>"
            msgs.append(tool_result(seq + 1, call_id, output))
        msgs.append(
            assistant(
                seq + 2,
                f"The helper in src/billing/part{i}.py rounds cents with banker's rounding "
                f"and keeps {100 + i} cached rates. Next I will check the tax table.",
            )
        )
        seq += 3
    return counted(msgs)


def test_sections_in_order_with_memory_verbatim() -> None:
    memory = HierarchicalMemory()
    goal = "Make Invoice.total ignore lines without an amount"
    memory.set_goal(goal, ["reproduce", "fix"], seqs=[1])  # stated in message #1
    memory.complete_subtask("reproduce")
    memory.set_phase("debugging")
    memory.add_decision("Treat a missing amount as zero", "the API allows null", "high")
    for _ in range(3):
        memory.track_error_pattern("TypeError: unsupported operand type(s) for +: 'int'")
    text = ExtractiveSummarizer().summarize(
        swe_session(), max_tokens=3_000, facts=facts_from_memory(memory)
    )
    parsed = parse_summary(text)
    assert parsed.order == ["goal", "decisions", "errors", "files", "state", "narrative"]
    assert parsed.sections["goal"] == [
        "Goal: Make Invoice.total ignore lines without an amount (#1)",
        "Phase: debugging",
        "Progress: 1/2 subtasks done",
        "- [x] reproduce (#1)",
        "- [ ] fix (#1)",
    ]
    # written through the API without a source: marked, for compaction to match back
    assert parsed.sections["decisions"] == [
        "- Treat a missing amount as zero — why: the API allows null (impact: high) (#?)"
    ]
    assert parsed.sections["errors"][0] == (
        "- recurring (x3) ALERT: typeerror: unsupported operand type(s) for +: 'int' (#?)"
    )
    assert "Next step: fix (first open subtask) (#1)" in parsed.sections["state"]
    # what memory wrote can be read back for the next compaction
    back = facts_from_summary(text)
    assert back.goal == memory.goal and back.open_subtasks == ["fix"]
    assert [d.text for d in back.decisions] == ["Treat a missing amount as zero"]


def test_a_traceback_is_one_error_and_markup_never_a_fact() -> None:
    text = ExtractiveSummarizer().summarize(swe_session(), max_tokens=3_000)
    errors = parse_summary(text).sections["errors"]
    assert errors == [  # four tracebacks of 70 frames each: one line, citing the four
        "- TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"
        " (at src/billing/invoice.py:88 in total) (x4) (#9, #27, #45, #63)"
    ]
    for bad in ("<output>", "</output>", "<returncode>", "returncode", "site-packages"):
        assert bad not in text
    assert not re.search(r"^- .*\b(def|return) ", text, re.M)  # no code lines quoted
    files = " ".join(parse_summary(text).sections["files"])
    assert "src/billing/part0.py" in files and "src/billing/invoice.py" in files


def test_the_budget_is_spent() -> None:
    messages = agent_history(400, seed=5)
    for budget in (1_000, 4_000, 12_000):
        text = ExtractiveSummarizer().summarize(messages, max_tokens=budget)
        used = count_tokens(text)
        assert 0.85 * budget <= used <= budget, (budget, used)


def test_deterministic_and_refuses_empty_input() -> None:
    messages = swe_session()
    first = ExtractiveSummarizer().summarize(messages, max_tokens=1_500)
    assert first == ExtractiveSummarizer().summarize(messages, max_tokens=1_500)
    with pytest.raises(Exception, match="nothing to summarise"):
        ExtractiveSummarizer().summarize([Message(role="assistant", content="")], max_tokens=50)


def test_without_memory_goal_and_decisions_come_from_the_messages() -> None:
    messages = counted(
        [
            user(1, "Our goal is to migrate the billing service to Postgres 16 this week."),
            assistant(2, "We decided to keep the old schema for a week.", kind="decision"),
            *[
                assistant(i, f"Routine chatter number {i} about nothing much.")
                for i in range(3, 40)
            ],
        ]
    )
    parsed = parse_summary(ExtractiveSummarizer().summarize(messages, max_tokens=600))
    assert parsed.sections["goal"] == [
        "Goal: Our goal is to migrate the billing service to Postgres 16 this week. (#1)"
    ]
    assert parsed.sections["decisions"] == [
        "- We decided to keep the old schema for a week. (impact: medium) (#2)"
    ]


def test_paths_found_in_text() -> None:
    text = (
        'File "/repo/app/io.py", line 3; see src/a.py:12: and ./scripts/run.sh, '
        "/workspace/out/report.csv, README.md and https://example.com/x.py, not e.g. or v1.2."
    )
    assert find_paths(text) == [
        "/repo/app/io.py",
        "src/a.py",
        "./scripts/run.sh",
        "/workspace/out/report.csv",
        "README.md",
    ]


def test_openai_prompt_asks_for_the_sections_and_carries_memory() -> None:
    for key in ("goal", "decisions", "errors", "files", "state", "narrative"):
        assert f"## {SECTIONS[key]}" in SUMMARY_PROMPT
    assert "{max_tokens}" in SUMMARY_PROMPT
    memory = HierarchicalMemory()
    memory.set_goal("Ship v2", ["api", "docs"])
    memory.add_decision("Use FastAPI", "async", "high")
    request = summary_request(agent_history(3), facts_from_memory(memory))
    assert request.startswith("MEMORY (copy verbatim):\nGoal: Ship v2 (#?)\n")
    assert "- [ ] api (#?)" in request
    assert "- Use FastAPI — why: async (impact: high) (#?)" in request
    assert "\n\nTRANSCRIPT:\n[#0] system:" in request


def _structured() -> str:
    memory = HierarchicalMemory()
    memory.set_goal("Port the importer to asyncio", ["parser", "tests"])
    for i in range(12):
        memory.add_decision(f"Decision {i}: keep module m{i} synchronous", "less churn", "low")
    return ExtractiveSummarizer().summarize(
        agent_history(300, seed=2), max_tokens=6_000, facts=facts_from_memory(memory)
    )


def test_fit_summary_keeps_memory_sections_first() -> None:
    summary = _structured()
    assert count_tokens(summary) > 4_000
    small = fit_summary(summary, 900)
    assert count_tokens(small) <= 900
    parsed = parse_summary(small)
    assert parsed.sections["goal"][0] == "Goal: Port the importer to asyncio (#?)"
    assert len(parsed.sections["decisions"]) == 12  # memory-backed: whole
    narrative = parse_summary(summary).sections["narrative"]
    kept = parsed.sections.get("narrative", [])
    assert len(kept) < len(narrative)
    assert kept == narrative[len(narrative) - len(kept) :]  # the newest lines
    note = next(line for line in parsed.header if line.startswith("[cut to fit:"))
    assert f"narrative {len(kept)} of {len(narrative)} lines" in note
    assert fit_summary(summary, 100_000) == summary


def test_fit_summary_of_plain_text_and_tiny_rooms() -> None:
    plain = "word " * 3_000
    cut = fit_summary(plain, 200)
    assert count_tokens(cut) <= 200 and "[cut to fit:" in cut
    summary = _structured()
    for room in (1, 30, 120):
        assert count_tokens(fit_summary(summary, room)) <= room
    assert fit_summary(summary, 0) == ""
