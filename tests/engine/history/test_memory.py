"""Hierarchical memory: scoring, compression, decisions, error patterns, goal, state."""

from __future__ import annotations

import json
import logging
import time

import pytest

from contextq.errors import ValidationFailed
from contextq.history import HierarchicalMemory, Message, normalise_error, score_action
from contextq.history.memory import score_message
from tests.engine.history.builders import agent_history, call, result


def test_scores() -> None:
    assert score_action("decision") == 0.9
    assert score_action("error") == 0.8
    assert score_action("reasoning") == 0.7
    assert score_action("user_prompt") == 0.6
    assert score_action("tool_call") == 0.5
    assert score_action("observation") == 0.4
    assert score_action("tool_call", success=False) == 0.8  # failed +0.3
    assert score_action("tool_call", success=True) == 0.3  # routine success -0.2
    assert score_action("observation", success=True) == 0.2
    assert score_action("error", success=False, recurring=True) == 1.0  # clamped
    assert score_action("decision", success=True) == 0.9  # not routine


def test_message_scores() -> None:
    assert score_message(Message(role="user", content="x")) == 0.6
    assert score_message(Message(role="tool", content="Traceback (most recent call last)")) == 1.0
    assert score_message(Message(role="user", content="x", importance=0.1)) == 0.1
    assert score_message(Message(role="user", content="x", pinned=True)) == 1.0


def test_normalised_error_patterns_alert_after_three(caplog: pytest.LogCaptureFixture) -> None:
    assert normalise_error("Timeout after 30s on  PORT 8080") == "timeout after Ns on port N"
    memory = HierarchicalMemory()
    with caplog.at_level(logging.WARNING, logger="contextq.history.memory"):
        first = memory.add_action("error", "Timeout after 30 ms")
        second = memory.add_action("error", "timeout after 45 ms")
        assert not memory.snapshot()["error_patterns"][0]["alert"]
        memory.add_action("error", "TIMEOUT AFTER 7 ms")
    assert first.importance == 0.8
    assert second.importance == 1.0  # recurring pattern +0.8, clamped
    [pattern] = memory.snapshot()["error_patterns"]
    assert pattern["pattern"] == "timeout after N ms"
    assert pattern["count"] == 3 and pattern["alert"] is True
    assert any("recurring error pattern" in r.getMessage() for r in caplog.records)
    assert "timeout after N ms (x3) ALERT" in memory.render()


def test_compression_keeps_critical_and_recent() -> None:
    # limit 0.5 * 20 = 10 actions; recent 5; at most 10 - 5 - 1 = 4 older critical ones
    memory = HierarchicalMemory(max_working_memory=20, compression_threshold=0.5, recent_to_keep=5)
    memory.add_action("decision", "Use SQLite for the cache")
    for i in range(12):
        memory.add_action(
            "tool_call",
            f"read file {i}",
            success=i % 6 != 0,
            metadata={"tool": "read_file", "path": f"f{i % 3}.py"},
        )
    kinds = [(a.kind, a.content) for a in memory.working]
    assert ("decision", "Use SQLite for the cache") in kinds
    assert memory.working[-1].content == "read file 11"
    assert len(memory.working) <= 10
    # the failed calls are critical (0.5 + 0.3 = 0.8) and stay
    assert all(
        a.content in {"read file 0", "read file 6"} or a.importance <= 0.7 or a.kind == "decision"
        for a in memory.working
    )
    summary = memory.snapshot()["stats"]["compressed_summary"]
    assert summary.startswith("Executed ")
    assert "successful)" in summary and "Read 3 files" in summary
    rendered = memory.render()
    for section in ("KEY DECISIONS:", "PREVIOUS ACTIONS: Executed", "RECENT ACTIONS:"):
        assert section in rendered
    assert (
        rendered.index("KEY DECISIONS")
        < rendered.index("PREVIOUS ACTIONS")
        < rendered.index("RECENT ACTIONS")
    )


def test_compressed_summary_counts() -> None:
    memory = HierarchicalMemory(max_working_memory=14, compression_threshold=1.0, recent_to_keep=1)
    for i in range(12):
        memory.add_action("tool_call", "x", i >= 2, {"tool": "read_file", "file": f"{i % 3}"})
    for _ in range(3):
        memory.add_action("observation", "saw it", success=True)
    # 15 actions > 14: 12 tool calls (2 failed, critical, kept) + 2 observations folded
    assert memory.compressed.summary() == (
        "Executed 10 tools (10 successful); Read 3 files; 2 observations"
    )


def test_decision_trail_is_never_compressed() -> None:
    memory = HierarchicalMemory(max_working_memory=4, compression_threshold=1.0, recent_to_keep=1)
    for i in range(50):
        memory.add_decision(f"decision {i}", rationale="why", impact="low")
        memory.add_action("tool_call", "t", success=True)
    assert [d["decision"] for d in memory.decisions] == [f"decision {i}" for i in range(50)]
    # a render with a token cap shows the newest ones and says how many are left out
    text = memory.render(max_tokens=200)
    assert "decision 49" in text and "earlier decisions not shown" in text


def test_goal_subtasks_progress_phase() -> None:
    memory = HierarchicalMemory()
    memory.set_goal("Ship v1", ["parser", "tests", "docs"])
    memory.complete_subtask("tests")
    memory.set_phase("implementation")
    snap = memory.snapshot()
    assert snap["goal"] == {
        "text": "Ship v1",
        "progress": 0.3333,
        "subtasks": [
            {"name": "parser", "done": False},
            {"name": "tests", "done": True},
            {"name": "docs", "done": False},
        ],
    }
    assert snap["phase"] == "implementation"
    assert memory.render().startswith("GOAL: Ship v1 (progress 1/3)\n  [ ] parser\n  [x] tests")
    with pytest.raises(ValidationFailed) as err:
        memory.complete_subtask("nope")
    assert err.value.field == "name"
    with pytest.raises(ValidationFailed):
        memory.add_action("dance")


def test_snapshot_shape_matches_spec() -> None:
    memory = HierarchicalMemory()
    memory.add_decision(
        "Use Postgres",
        rationale="concurrency",
        impact="high",
        created_at="2026-01-01T00:00:00+00:00",
    )
    memory.add_action("error", "boom 1", created_at="2026-01-02T00:00:00+00:00")
    snap = memory.snapshot()
    assert set(snap) == {"goal", "phase", "decisions", "error_patterns", "stats"}
    assert set(snap["goal"]) == {"text", "subtasks", "progress"}
    assert snap["decisions"] == [
        {
            "decision": "Use Postgres",
            "rationale": "concurrency",
            "impact": "high",
            "created_at": "2026-01-01T00:00:00+00:00",
        }
    ]
    assert snap["error_patterns"] == [
        {"pattern": "boom N", "count": 1, "alert": False, "last_seen": "2026-01-02T00:00:00+00:00"}
    ]


def test_state_round_trips_through_json() -> None:
    memory = HierarchicalMemory.from_messages(agent_history(30, seed=2), compression_threshold=0.8)
    memory.set_goal("g", ["a", "b"])
    memory.complete_subtask("a")
    data = json.loads(json.dumps(memory.to_dict()))
    again = HierarchicalMemory.from_dict(data)
    assert again.to_dict() == memory.to_dict()
    assert again.render() == memory.render()
    assert again.snapshot() == memory.snapshot()
    again.add_action("reasoning", "next")
    assert again.working[-1].id == memory.total_actions + 1
    assert HierarchicalMemory.from_dict(None).snapshot()["stats"]["total_actions"] == 0


def test_tool_results_settle_their_calls() -> None:
    memory = HierarchicalMemory()
    memory.observe(call(1, "c1", name="read_file", path="src/a.py"))
    memory.observe(result(2, "c1", "Error: permission denied"))
    tool_call = memory.working[0]
    assert tool_call.success is False and tool_call.importance == 0.8
    assert tool_call.files == ["src/a.py"]
    assert memory.working[1].kind == "error"
    assert memory.observe(Message(role="system", content="s")) is None


def test_add_action_with_compression_is_fast() -> None:
    memory = HierarchicalMemory()
    timings = []
    for i in range(3_000):
        started = time.perf_counter()
        memory.add_action(
            ("tool_call", "observation", "error", "reasoning")[i % 4],
            f"step {i} did something",
            success=i % 5 != 0,
            tool="run",
        )
        timings.append(time.perf_counter() - started)
    timings.sort()
    assert timings[int(len(timings) * 0.99)] < 0.005
