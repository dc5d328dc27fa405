"""The retention check before a summary is accepted, and incremental compaction: five
successive foldings still hold the goal, the open subtasks, every decision and the
recurring error."""

from __future__ import annotations

import random
from typing import Any

from contextq.history import ExtractiveSummarizer, Message, compact
from contextq.history.memory import HierarchicalMemory
from contextq.history.provenance import split_cited
from contextq.history.summary_format import parse_summary
from contextq.settings import Settings
from contextq.tokens import count_tokens
from service.summarizers import OpenAISummarizer
from tests.engine.history.builders import assistant, call, counted, result, sentence, user
from tests.engine.history.fake_llm import FakeChatServer

GOAL = "Move the nightly export from cron to the task queue"
SUBTASKS = ["write the task", "schedule it", "delete the cron entry"]


def session_memory() -> HierarchicalMemory:
    memory = HierarchicalMemory()
    memory.set_goal(GOAL, SUBTASKS)
    memory.complete_subtask("write the task")
    memory.add_decision("Use Celery beat for the schedule", "one scheduler for everything", "high")
    memory.add_decision("Keep the CSV format", "downstream parsers expect it")
    for port in (5432, 5433, 5434):
        memory.track_error_pattern(f"Timeout after 30s connecting to db on port {port}")
    return memory


def dropping_goal_and_a_decision(body: dict[str, Any]) -> str:
    """A model that copies the memory badly: it leaves out the goal and one decision."""
    request = body["messages"][1]["content"]
    memory = request.split("\n\nTRANSCRIPT:", 1)[0].splitlines()[1:]
    subtasks = [line for line in memory if line.startswith("- [")]
    decisions = [line for line in memory if "Keep the CSV format" in line]
    return "\n".join(
        [
            "## Goal and subtasks",
            *subtasks,
            "## Decisions",
            *decisions,
            "## Errors and recurring patterns",
            "- Timeout after 30s connecting to db on port 5432 (three times)",
            "## Narrative",
            "- The agent wrote the export task and tried the database three times.",
        ]
    )


def test_retention_repairs_what_the_model_dropped() -> None:
    memory = session_memory()
    rng = random.Random(3)
    messages = counted([user(i, sentence(rng, 40)) for i in range(1, 80)])
    with FakeChatServer(["ok"], reply=dropping_goal_and_a_decision) as server:
        summarizer = OpenAISummarizer(base_url=server.url, model="tiny", timeout_s=5)
        out = compact(messages, summarizer, Settings(), memory=memory, target_tokens=1_500)
    assert out is not None and out.method == "summary" and out.summarizer == "openai"
    # checked: the goal, 2 open subtasks, 2 decisions, 1 pattern seen 3 times
    assert out.checked_items == 6
    assert out.retention == round(4 / 6, 4)
    assert out.repaired == [f"goal: {GOAL}", "decision: Use Celery beat for the schedule"]
    restored = parse_summary(out.summary).sections["restored"]
    # written through the memory's API, said in no message: their source is unknown
    assert restored == [
        f"Goal: {GOAL} (#?)",
        "- Use Celery beat for the schedule — why: one scheduler for everything"
        " (impact: high) (#?)",
    ]
    assert out.unsourced_items >= 2
    assert out.summary_tokens == count_tokens(out.summary)
    # the model was asked for the sections and given the memory to copy
    [body] = server.requests
    assert "## Goal and subtasks" in body["messages"][0]["content"]
    assert f"Goal: {GOAL}" in body["messages"][1]["content"]


def test_a_faithful_summary_needs_no_repair() -> None:
    memory = session_memory()
    messages = counted([user(i, sentence(random.Random(i), 30)) for i in range(1, 60)])
    out = compact(messages, ExtractiveSummarizer(), Settings(), memory=memory, target_tokens=1_200)
    assert out is not None
    assert (out.retention, out.repaired, out.checked_items) == (1.0, [], 6)


def test_truncation_fallback_is_repaired_within_its_room() -> None:
    memory = session_memory()
    messages = counted([user(i, sentence(random.Random(i), 60)) for i in range(1, 120)])
    out = compact(messages, None, Settings(), memory=memory, target_tokens=1_000)
    assert out is not None and out.method == "truncation"
    assert out.retention == 0.0 and len(out.repaired) == 6
    assert "tokens omitted" in out.summary and f"Goal: {GOAL}" in out.summary
    room = 1_000 - sum(m.token_count or 0 for m in messages if m.seq > out.through_seq)
    assert out.summary_tokens <= max(room, 256)


def round_of_work(
    start: int, rng: random.Random, memory: HierarchicalMemory, n: int
) -> list[Message]:
    """Messages of one stretch of an agent run; decisions and errors feed the memory."""
    out: list[Message] = []
    seq = start
    for step in range(n):
        out.append(user(seq, sentence(rng, 25)))
        out.append(call(seq + 1, f"c{seq}", name="run", path=f"src/mod{rng.randint(1, 30)}.py"))
        failed = step % 7 == 3
        text = (
            f"Timeout after {rng.randint(10, 99)}s connecting to db on port {rng.randint(1, 9999)}"
            if failed
            else sentence(rng, 40)
        )
        out.append(result(seq + 2, f"c{seq}", text, kind="error" if failed else "observation"))
        if step % 9 == 4:
            out.append(
                assistant(seq + 3, f"Decision {seq}: cache module {seq} results", kind="decision")
            )
        else:
            out.append(assistant(seq + 3, sentence(rng, 30)))
        seq += 4
    counted(out)
    for message in out:
        memory.observe(message)
    return out


def test_five_successive_compactions_keep_what_matters() -> None:
    rng = random.Random(11)
    memory = HierarchicalMemory()
    memory.set_goal(GOAL, SUBTASKS)
    pending: list[Message] = []
    previous: str | None = None
    seq = 1
    history_tokens = 0
    read: list[int] = []
    for round_number in range(5):
        new = round_of_work(seq, rng, memory, 40)
        seq = new[-1].seq + 1
        history_tokens += sum(m.token_count or 0 for m in new)
        if round_number == 2:
            memory.complete_subtask("write the task")
        pending += new
        out = compact(
            pending,
            ExtractiveSummarizer(),
            Settings(),
            memory=memory,
            previous_summary=previous,
            target_tokens=2_500,
        )
        assert out is not None and out.method == "summary"
        assert out.retention == 1.0 and out.repaired == []
        read.append(out.original_tokens)
        previous = out.summary
        pending = [m for m in pending if m.seq > out.through_seq]
    assert previous is not None
    parsed = parse_summary(previous)
    goal_lines = [split_cited(line)[0] for line in parsed.sections["goal"]]
    assert f"Goal: {GOAL}" in goal_lines
    assert "- [x] write the task" in goal_lines
    for name in ("schedule it", "delete the cron entry"):
        assert f"- [ ] {name}" in goal_lines
    decisions = [d["decision"] for d in memory.decisions]
    assert len(decisions) >= 10
    for decision in decisions:
        assert any(line.startswith(f"- {decision}") for line in parsed.sections["decisions"])
    recurring = [p for p, e in memory.error_patterns.items() if e["count"] >= 3]
    assert recurring == ["timeout after Ns connecting to db on port N"]
    assert f"ALERT: {recurring[0]}" in previous
    # each run reads the previous summary and what is new, not the whole history
    assert read[4] < history_tokens / 2
    assert max(read[1:]) < 2 * min(read[1:])


def test_without_a_memory_the_previous_summary_carries_goal_and_decisions() -> None:
    rng = random.Random(5)
    scratch = HierarchicalMemory()
    first = [user(1, "Our goal is to cut the p99 latency of the search API below 200 ms.")]
    pending = counted(first) + round_of_work(2, rng, scratch, 30)
    previous: str | None = None
    seq = pending[-1].seq + 1
    for _ in range(5):
        out = compact(
            pending,
            ExtractiveSummarizer(),
            Settings(),
            previous_summary=previous,
            target_tokens=2_000,
        )
        assert out is not None
        previous = out.summary
        pending = [m for m in pending if m.seq > out.through_seq]
        new = round_of_work(seq, rng, scratch, 30)
        seq = new[-1].seq + 1
        pending += new
    assert previous is not None
    parsed = parse_summary(previous)
    # the goal came from message #1: five summaries of summaries later it still says so
    assert parsed.sections["goal"][0] == (
        "Goal: Our goal is to cut the p99 latency of the search API below 200 ms. (#1)"
    )
    assert any(
        line.startswith("- Decision 18: cache module 18") for line in parsed.sections["decisions"]
    )


def test_check_reads_patterns_with_their_numbers_and_case() -> None:
    from contextq.history.retention import check_retention
    from contextq.history.summary_format import facts_from_memory

    facts = facts_from_memory(session_memory())
    complete = (
        f"goal: {GOAL.upper()}\n- [ ] schedule   it\n- [ ] delete the cron entry\n"
        "- use celery beat for the schedule\n- keep the csv format\n"
    )
    for errors, present in (
        ("TIMEOUT after 45s connecting to db on port 9", True),
        ("timeout after Ns connecting to db on port N", True),  # as memory writes it
        ("timeout after ns connecting to db on port none", False),
        ("timeout after 45 s connecting to db on port 9", False),
    ):
        retention = check_retention(complete + errors, facts)
        assert retention.checked == 6
        assert (retention.share == 1.0) is present, errors
    missing = check_retention("nothing here", facts)
    assert missing.share == 0.0 and [i.label.split(":")[0] for i in missing.missing] == [
        "goal",
        "subtask",
        "subtask",
        "decision",
        "decision",
        "error pattern",
    ]
