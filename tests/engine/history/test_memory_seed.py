"""Seed 001's ContextManager interface on HierarchicalMemory: its examples, options as a
ratio, impact levels, phase weights, statistics, reset, export/import and checkpoints."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from contextq.errors import ValidationFailed
from contextq.history.memory import HierarchicalMemory, MemoryOptions, memory_checkpoint
from contextq.settings import Settings
from contextq.tokens import count_tokens
from tests.engine.history.builders import agent_history


def test_fifteen_actions_compress_past_the_ratio() -> None:
    """Seed 001: defaults 10 / 8000 / 0.7, fifteen routine actions."""
    memory = HierarchicalMemory()
    for i in range(15):
        memory.add_action("tool_call", f"Executed command {i}", metadata={"tool": "bash"})
    # limit 0.7 * 10 = 7: the 8th action compresses (3 folded, the newest 5 kept),
    # the 11th and the 14th again; the 15th follows
    stats = memory.stats()
    assert stats["total_actions"] == 15
    assert stats["compression_events"] == 3
    assert stats["working_memory_size"] == 6
    assert [a.content for a in memory.working] == [f"Executed command {i}" for i in range(9, 15)]
    assert memory.compressed.summary() == "Executed 9 tools (9 successful)"
    context = memory.get_context_for_agent()
    assert "PREVIOUS ACTIONS: Executed 9 tools (9 successful)" in context
    assert "RECENT ACTIONS:" in context and "bash: Executed command 14" in context


# seed 001's own example (its README's "BEFORE COMPRESSION (15 actions)")
SEED_EXAMPLE: list[tuple[str, str, bool, dict[str, Any]]] = [
    ("tool_call", "Read file auth.py", True, {"tool": "read_file", "path": "auth.py"}),
    ("tool_call", "Read file config.py", True, {"tool": "read_file", "path": "config.py"}),
    ("tool_call", "Read file database.py", True, {"tool": "read_file", "path": "database.py"}),
    ("decision", "Decision: Use PostgreSQL", True, {"rationale": "concurrent writers"}),
    ("tool_call", "Edit database.py", True, {"tool": "edit_file", "path": "database.py"}),
    ("tool_call", "Run tests", True, {"tool": "bash"}),
    ("error", "Error: Connection failed", False, {}),
    ("observation", "Read logs", True, {}),
    ("decision", "Decision: Add retry logic", True, {"rationale": "the database restarts"}),
    ("tool_call", "Edit connection.py", True, {"tool": "edit_file", "path": "connection.py"}),
    ("tool_call", "Run tests", True, {"tool": "bash"}),
    ("observation", "Tests passed", True, {}),
    ("tool_call", "Edit docs", True, {"tool": "edit_file"}),
    ("tool_call", "Commit changes", True, {"tool": "git"}),
    ("tool_call", "Push to remote", True, {"tool": "git"}),
]
SEED_LAST_FIVE = ["Run tests", "Tests passed", "Edit docs", "Commit changes", "Push to remote"]


def recent_section(context: str, contents: list[str]) -> list[str]:
    """Which of `contents` each line of RECENT ACTIONS shows (`- [kind ok] tool: text`)."""
    block = context.split("RECENT ACTIONS:\n", 1)[1].split("\n\n", 1)[0]
    return [
        next((c for c in contents if line.endswith(f"] {c}") or line.endswith(f": {c}")), line)
        for line in block.splitlines()
    ]


def test_seed_example_keeps_the_last_five_and_the_critical_ones() -> None:
    """Issue 17 item 6: after seed 001's 15 actions (10 / 0.7) the working memory is the
    seed's "AFTER COMPRESSION": the critical actions (both decisions, the error) and the
    last five; PREVIOUS ACTIONS holds the compressed rest."""
    memory = HierarchicalMemory(max_working_memory=10, compression_threshold=0.7)
    for kind, content, success, metadata in SEED_EXAMPLE:
        memory.add_action(kind, content, success, metadata)
    kept = [a.content for a in memory.working]
    assert kept == [
        "Decision: Use PostgreSQL",
        "Error: Connection failed",
        "Decision: Add retry logic",
        *SEED_LAST_FIVE,
    ]
    context = memory.get_context_for_agent()
    assert recent_section(context, kept) == kept
    previous = context.split("PREVIOUS ACTIONS: ", 1)[1].split("\n", 1)[0]
    # folded: the three reads, the two edits, the first test run, the log read
    assert previous == (
        "Executed 6 tools (6 successful); Read 3 files; Edited 2 files; 1 observation"
    )
    assert context.index("PREVIOUS ACTIONS") < context.index("RECENT ACTIONS")
    assert memory.stats()["working_memory_size"] == 8


def test_compression_keeps_the_critical_actions_of_the_fifteen() -> None:
    memory = HierarchicalMemory()
    memory.set_goal("Fix the flaky upload test", ["reproduce", "fix", "verify"])
    for i in range(15):
        if i == 2:
            memory.add_action("error", "ConnectionError: port 5432 refused", success=False)
        elif i == 4:
            memory.add_action("decision", "Retry with backoff", metadata={"impact": "high"})
        else:
            memory.add_action("observation", f"log line {i}")
    working = [a.content for a in memory.working]
    assert "ConnectionError: port 5432 refused" in working  # importance 1.0
    assert "Retry with backoff" in working  # 0.9
    assert len(working) <= 7
    assert memory.decisions[0]["impact"] == "high"
    context = memory.get_context_for_agent()
    sections = ("GOAL:", "KEY DECISIONS:", "PREVIOUS ACTIONS:", "RECENT ACTIONS:")
    positions = [context.index(s) for s in sections]
    assert positions == sorted(positions)


def test_error_pattern_alert_at_the_third_repeat(caplog: pytest.LogCaptureFixture) -> None:
    memory = HierarchicalMemory()
    with caplog.at_level(logging.WARNING, logger="contextq.history.memory"):
        first = memory.track_error_pattern("Connection timeout after 30s on port 8080")
        second = memory.track_error_pattern("connection TIMEOUT after 45s on port 8081")
        assert not caplog.records
        third = memory.track_error_pattern("Connection timeout after 5s on port 80")
    assert first == {
        "pattern": "connection timeout after Ns on port N",
        "count": 1,
        "alert": False,
        "last_seen": first["last_seen"],
    }
    assert (second["count"], second["alert"]) == (2, False)
    assert (third["count"], third["alert"]) == (3, True)
    assert [r.getMessage() for r in caplog.records] == [
        "recurring error pattern (3 times): connection timeout after Ns on port N"
    ]
    assert memory.stats()["error_alerts"] == 1
    assert "connection timeout after Ns on port N (x3) ALERT" in memory.get_context_for_agent()
    memory.track_error_pattern("Disk full")
    assert memory.stats()["error_alerts"] == 1


def test_subtask_progress() -> None:
    memory = HierarchicalMemory()
    memory.set_goal("Implement auth", ["design schema", "write endpoints", "add tests"])
    assert memory.progress == 0.0
    assert memory.complete_subtask("design schema") == 0.3333
    assert memory.complete_subtask("write endpoints") == 0.6667
    context = memory.get_context_for_agent()
    assert context.startswith("GOAL: Implement auth (progress 2/3)")
    assert "[x] design schema" in context and "[ ] add tests" in context
    assert memory.complete_subtask("add tests") == 1.0
    with pytest.raises(ValidationFailed) as err:
        memory.complete_subtask("deploy")
    assert err.value.field == "name"


@pytest.mark.parametrize(
    ("phase", "kind", "success", "score"),
    [
        (None, "error", False, 1.0),
        (None, "error", None, 0.8),
        ("debugging", "error", None, 1.0),
        ("Debug the importer", "observation", None, 0.5),
        ("testing", "observation", True, 0.3),
        ("implementation", "tool_call", None, 0.6),
        ("planning", "reasoning", None, 0.8),
        ("exploration", "reasoning", None, 0.8),
        ("lunch", "reasoning", None, 0.7),  # a phase we do not know adds nothing
    ],
)
def test_phase_feeds_importance(
    phase: str | None, kind: str, success: bool | None, score: float
) -> None:
    memory = HierarchicalMemory()
    if phase:
        memory.set_phase(phase)
    assert memory.add_action(kind, "x", success).importance == score


def test_phase_decides_what_survives_compression() -> None:
    def run(phase: str | None) -> list[str]:
        memory = HierarchicalMemory(max_working_memory=8, compression_threshold=1.0)
        if phase:
            memory.set_phase(phase)
        for i in range(12):
            memory.add_action("observation" if i % 2 else "reasoning", f"step {i}", None)
        return [a.content for a in memory.working]

    # reasoning is 0.7 (not critical) until planning makes it 0.8: then older ones stay
    assert run(None) == [f"step {i}" for i in range(4, 12)]
    assert run("planning") == ["step 2", "step 4", "step 6", *(f"step {i}" for i in range(7, 12))]


def test_impact_levels() -> None:
    memory = HierarchicalMemory()
    assert memory.add_decision("Use Postgres", "concurrency")["impact"] == "medium"
    assert memory.add_decision("Drop Redis", "one less service", "HIGH ")["impact"] == "high"
    assert memory.add_decision("Rename module", impact="low")["impact"] == "low"
    with pytest.raises(ValidationFailed) as err:
        memory.add_decision("Ship it", "why not", "huge")
    assert err.value.field == "impact" and "high, medium, low" in str(err.value)
    with pytest.raises(ValidationFailed) as err:
        memory.add_decision("  ")
    assert err.value.field == "decision"
    assert memory.stats()["decisions_made"] == 3
    assert "- Drop Redis (why: one less service) (impact: high)" in memory.render()


def test_options_are_a_ratio_and_validated() -> None:
    options = MemoryOptions.parse({"max_working_memory": 20, "compression_threshold": 0.5})
    assert (options.compression_limit, options.recent, options.critical_cap) == (10, 5, 15)
    memory = HierarchicalMemory(options=options)
    for i in range(11):
        memory.add_action("observation", f"o{i}", True)
    assert memory.compressions == 1 and len(memory.working) == 5
    bad: list[tuple[dict[str, Any], str]] = [
        ({"compression_threshold": 7}, "memory_options.compression_threshold"),
        ({"compression_threshold": 0}, "memory_options.compression_threshold"),
        ({"compression_threshold": "0.7"}, "memory_options.compression_threshold"),
        ({"max_working_memory": 1}, "memory_options.max_working_memory"),
        ({"max_working_memory": True}, "memory_options.max_working_memory"),
        ({"max_context_tokens": 10}, "memory_options.max_context_tokens"),
        ({"recent_to_keep": 7}, "memory_options.recent_to_keep"),
        ({"window": 3}, "memory_options.window"),
    ]
    for given, field in bad:
        with pytest.raises(ValidationFailed) as err:
            MemoryOptions.parse(given)
        assert err.value.field == field, given
    with pytest.raises(ValidationFailed) as err:
        HierarchicalMemory(compression_threshold=20)
    assert err.value.field == "options.compression_threshold"


def test_settings_give_the_defaults() -> None:
    settings = Settings(
        MEMORY_COMPRESSION_THRESHOLD=0.5, MEMORY_MAX_WORKING_MEMORY=8, MEMORY_MAX_CONTEXT_TOKENS=500
    )
    options = MemoryOptions.parse(None, settings=settings)
    assert options == MemoryOptions(8, 500, 0.5)
    # a conversation's own options override the settings' defaults
    assert (
        MemoryOptions.parse({"max_working_memory": 20}, settings=settings).compression_limit == 10
    )
    memory = HierarchicalMemory.from_dict(None, options=options)
    for i in range(5):
        memory.add_action("observation", f"o{i}", True)
    assert memory.compressions == 1  # 5 > 0.5 * 8
    assert MemoryOptions.parse(None) == MemoryOptions(10, 8000, 0.7)
    for wrong in ({"MEMORY_COMPRESSION_THRESHOLD": 0}, {"MEMORY_COMPRESSION_THRESHOLD": 1.5}):
        with pytest.raises(ValidationError):
            Settings(**wrong)


def test_context_stays_within_max_context_tokens_and_utilisation() -> None:
    memory = HierarchicalMemory(max_context_tokens=150)
    memory.set_goal("Migrate the billing service", ["schema", "data", "cutover"])
    for i in range(40):
        memory.add_decision(f"decision number {i} about the billing schema", "it was needed")
    for i in range(6):
        memory.add_action("reasoning", f"thinking about step {i} of the migration", None)
    context = memory.get_context_for_agent()
    tokens = count_tokens(context)
    assert tokens <= 150
    assert "decision number 39" in context and "earlier decisions not shown" in context
    assert memory.stats()["token_utilisation"] == round(tokens / 150, 4)
    assert 0.5 < memory.stats()["token_utilisation"] <= 1.0


def test_stats_keys_and_iterations() -> None:
    memory = HierarchicalMemory()
    memory.add_action("user_prompt", "fix the bug", None)
    memory.add_action("reasoning", "look at the log first", None)
    memory.add_action("tool_call", "grep error app.log", metadata={"tool": "bash"})
    memory.add_action("observation", "3 matches", True)
    memory.add_action("decision", "patch the retry loop")
    assert memory.stats() == {
        "total_actions": 5,
        "working_memory_size": 5,
        "compression_events": 0,
        "decisions_made": 1,
        "token_utilisation": memory.stats()["token_utilisation"],
        "iterations_completed": 3,  # reasoning, tool call, decision: one model step each
        "error_alerts": 0,
    }
    assert memory.stats()["token_utilisation"] > 0


def test_metadata_is_kept_and_checked() -> None:
    memory = HierarchicalMemory()
    action = memory.add_action(
        "tool_call", "edit", metadata={"tool": "edit_file", "path": "src/app.py", "lines": 12}
    )
    assert (action.tool, action.files, action.metadata["lines"]) == (
        "edit_file",
        ["src/app.py"],
        12,
    )
    for bad in ({"x": object()}, {"x": float("nan")}, {"x": "y" * 5000}):
        with pytest.raises(ValidationFailed) as err:
            memory.add_action("observation", "o", metadata=bad)
        assert err.value.field == "metadata"
    with pytest.raises(ValidationFailed) as err:
        memory.add_action("dance", "x")
    assert err.value.field == "action_type"


def test_reset_keeps_the_options() -> None:
    memory = HierarchicalMemory(max_working_memory=4)
    memory.set_goal("g", ["a"])
    memory.add_action("error", "boom")
    memory.reset()
    assert memory == HierarchicalMemory(max_working_memory=4)
    assert memory.stats()["total_actions"] == 0 and memory.get_context_for_agent() == ""


def _busy_memory() -> HierarchicalMemory:
    memory = HierarchicalMemory.from_messages(agent_history(40, seed=3))
    memory.set_goal("Ship v1", ["parser", "docs"])
    memory.complete_subtask("parser")
    memory.set_phase("testing")
    memory.add_decision("Freeze the API", "clients depend on it", "high")
    memory.add_action("tool_call", "pytest", False, {"tool": "bash", "exit": 1})
    return memory


def test_export_import_round_trip_is_exact() -> None:
    memory = _busy_memory()
    document = memory.export()
    again = HierarchicalMemory.import_state(json.loads(json.dumps(document)))
    assert again == memory
    assert again.export() == document
    assert again.get_context_for_agent() == memory.get_context_for_agent()
    assert again.stats() == memory.stats()
    again.add_action("reasoning", "next")
    assert again != memory
    assert again.working[-1].id == memory.next_id


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["decisions"][0].update(impact="huge"), "memory.decisions.0.impact"),
        (lambda d: d["options"].update(compression_threshold=3), "memory.options"),
        (lambda d: d["working"][0].update(kind="dance"), "memory.working.0.kind"),
        (lambda d: d.pop("goal"), "memory.goal"),
        (lambda d: d.update(version=7), "memory.version"),
        (lambda d: d["subtasks"].append({"name": "docs", "done": True}), "memory.subtasks"),
        (lambda d: d.update(next_id=1), "memory.next_id"),
    ],
)
def test_import_refuses_a_bad_document(change: Any, field: str) -> None:
    document = _busy_memory().export()
    change(document)
    with pytest.raises(ValidationFailed) as err:
        HierarchicalMemory.import_state(document)
    assert err.value.field is not None and err.value.field.startswith(field), err.value.field
    for junk in ([], "text", None, {"memory": 3}):
        with pytest.raises(ValidationFailed):
            HierarchicalMemory.import_state(junk)


def test_checkpoint_document() -> None:
    memory = _busy_memory()
    created = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    conversation = {"id": "c1", "title": "demo", "model": "gpt-4o", "created_at": created}
    checkpoint = memory_checkpoint(conversation, memory)
    assert checkpoint == {
        "conversation": {
            "id": "c1",
            "title": "demo",
            "model": "gpt-4o",
            "created_at": "2026-01-02T03:04:05+00:00",
        },
        "memory": memory.export(),
    }
    json.dumps(checkpoint)  # JSON as it is
    assert HierarchicalMemory.import_state(checkpoint) == memory  # import takes a checkpoint
    with pytest.raises(ValidationFailed) as err:
        memory_checkpoint({"title": "no id"}, memory)
    assert err.value.field == "conversation.id"


def test_a_version_one_row_still_loads() -> None:
    row = {
        "version": 1,
        "compression_threshold": 20,
        "recent_to_keep": 5,
        "goal": "g",
        "subtasks": [{"name": "a", "done": False}],
        "phase": None,
        "decisions": [
            {"decision": "d", "rationale": "", "impact": "ops", "created_at": "2026-01-01"}
        ],
        "error_patterns": {},
        "working": [
            {
                "id": 1,
                "kind": "reasoning",
                "content": "x",
                "importance": 0.7,
                "tool": None,
                "success": None,
                "files": [],
                "pattern": None,
                "message_id": None,
                "created_at": "2026-01-01",
                "call_ids": [],
            }
        ],
        "compressed": {},
        "total_actions": 1,
        "compressions": 0,
        "next_id": 2,
    }
    memory = HierarchicalMemory.from_dict(row)
    assert memory.options == MemoryOptions()
    assert memory.decisions[0]["impact"] == "medium"
    assert memory.working[0].metadata == {}
    assert HierarchicalMemory.import_state(memory.export()) == memory
