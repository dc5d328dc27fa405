"""What a hierarchical memory shows: the agent's context text, GET /memory, statistics.

`render` gives GOAL / KEY DECISIONS / ERROR PATTERNS / PREVIOUS ACTIONS / RECENT ACTIONS;
with a token cap the oldest decisions and actions are left out of the text (saying how
many) until it fits. The stored trail itself is never cut.
"""

from __future__ import annotations

from typing import Any

from contextq.history.memory_actions import ERROR_ALERT_AFTER
from contextq.history.memory_state import MemoryState
from contextq.tokens import DEFAULT_ENCODING, count_tokens, truncate_to_tokens


def render(
    memory: MemoryState, max_tokens: int | None = None, encoding: str = DEFAULT_ENCODING
) -> str:
    decisions, actions = len(memory.decisions), len(memory.working)
    while True:
        text = _render(memory, decisions, actions)
        if max_tokens is None or count_tokens(text, encoding) <= max_tokens:
            return text
        if decisions == 0 and actions == 0:
            return truncate_to_tokens(text, max_tokens, encoding)[0]
        decisions, actions = decisions // 2, actions // 2


def _render(memory: MemoryState, decision_limit: int, action_limit: int) -> str:
    summary = memory.compressed.summary()
    sections = [
        goal_section(memory),
        _decision_section(memory, decision_limit),
        _error_section(memory),
        f"PREVIOUS ACTIONS: {summary}" if summary else "",
        _recent_section(memory, action_limit),
    ]
    return "\n\n".join(s for s in sections if s)


def goal_section(memory: MemoryState) -> str:
    if not (memory.goal or memory.subtasks or memory.phase):
        return ""
    done = sum(1 for t in memory.subtasks if t["done"])
    lines = [f"GOAL: {memory.goal or '(not set)'}"]
    if memory.subtasks:
        lines[0] += f" (progress {done}/{len(memory.subtasks)})"
        lines += [f"  [{'x' if t['done'] else ' '}] {t['name']}" for t in memory.subtasks]
    if memory.phase:
        lines.append(f"PHASE: {memory.phase}")
    return "\n".join(lines)


def decision_line(decision: dict[str, Any]) -> str:
    line = f"- {decision['decision']}"
    if decision["rationale"]:
        line += f" (why: {decision['rationale']})"
    return line + f" (impact: {decision['impact']})"


def _decision_section(memory: MemoryState, limit: int) -> str:
    if not memory.decisions:
        return ""
    lines = ["KEY DECISIONS:"]
    shown = memory.decisions[len(memory.decisions) - limit :] if limit else []
    if len(shown) < len(memory.decisions):
        lines.append(f"- ({len(memory.decisions) - len(shown)} earlier decisions not shown)")
    lines += [decision_line(d) for d in shown]
    return "\n".join(lines)


def _error_section(memory: MemoryState) -> str:
    recurring = [(p, e) for p, e in memory.error_patterns.items() if e["count"] >= 2]
    if not recurring:
        return ""
    lines = ["ERROR PATTERNS:"]
    for pattern, entry in recurring:
        flag = " ALERT" if entry["alert"] else ""
        lines.append(f"- {pattern} (x{entry['count']}){flag}")
    return "\n".join(lines)


def _recent_section(memory: MemoryState, limit: int) -> str:
    if not memory.working:
        return ""
    shown = memory.working[len(memory.working) - limit :] if limit else []
    lines = ["RECENT ACTIONS:"]
    if len(shown) < len(memory.working):
        lines.append(f"- ({len(memory.working) - len(shown)} older actions not shown)")
    lines += [a.line() for a in shown]
    return "\n".join(lines)


def stats(memory: MemoryState, encoding: str = DEFAULT_ENCODING) -> dict[str, Any]:
    """Seed 001's statistics."""
    text = render(memory, memory.options.max_context_tokens, encoding)
    tokens = count_tokens(text, encoding) if text else 0
    return {
        "total_actions": memory.total_actions,
        "working_memory_size": len(memory.working),
        "compression_events": memory.compressions,
        "decisions_made": len(memory.decisions),
        "token_utilisation": round(tokens / memory.options.max_context_tokens, 4),
        "iterations_completed": memory.iterations,
        "error_alerts": sum(
            1 for e in memory.error_patterns.values() if e["count"] >= ERROR_ALERT_AFTER
        ),
    }


_DECISION_KEYS = ("decision", "rationale", "impact", "created_at")


def snapshot(memory: MemoryState) -> dict[str, Any]:
    """GET /memory (docs/history.md#hierarchical-memory): goal, phase, decisions, error_patterns,
    stats."""
    return {
        "goal": {
            "text": memory.goal,
            "subtasks": [{"name": t["name"], "done": t["done"]} for t in memory.subtasks],
            "progress": memory.progress,
        },
        "phase": memory.phase,
        "decisions": [{k: d[k] for k in _DECISION_KEYS} for d in memory.decisions],
        "error_patterns": [
            {
                "pattern": p,
                "count": e["count"],
                "alert": e["alert"],
                "last_seen": e["last_seen"],
            }
            for p, e in memory.error_patterns.items()
        ],
        "stats": {**stats(memory), "compressed_summary": memory.compressed.summary()},
    }
