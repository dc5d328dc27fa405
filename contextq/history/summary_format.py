"""The structured summary every summariser writes (docs/history.md#compaction), as text and back.

A summary is a header line, then fixed sections, each under a `## ` heading, in this
order: goal and subtasks, decisions, errors and recurring patterns, files and paths
touched, current state and next step, narrative (and, when the retention check had to
repair it, `## Restored from memory`). The sections memory knows (goal, subtasks, phase,
decisions, error patterns) are written from `MemoryFacts` verbatim, so they can be
checked and parsed back (`facts_from_summary`) when the next compaction folds this one.

Provenance (`provenance`): every item of the goal, decisions, errors, files and state
sections ends with the seqs of the messages it came from, `(#12, #40)`, or `(#?)` while
its source is unknown. `MemoryFacts.sources` holds them for the goal, the subtasks and
the error patterns (keys `goal`, `subtask:<name>`, `pattern:<pattern>`); a decision
carries its own. Parsed back, the seqs go on to the next summary; merged items union them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from contextq.history.memory_actions import ERROR_ALERT_AFTER
from contextq.history.seq_markers import cite, merge_seqs, split_cited

if TYPE_CHECKING:
    from contextq.history.memory_state import MemoryState

SECTIONS: dict[str, str] = {
    "goal": "Goal and subtasks",
    "decisions": "Decisions",
    "errors": "Errors and recurring patterns",
    "files": "Files and paths touched",
    "state": "Current state and next step",
    "narrative": "Narrative",
    "restored": "Restored from memory",
}
MEMORY_BACKED = ("goal", "decisions", "restored")
_KEY_BY_TITLE = {title.lower(): key for key, title in SECTIONS.items()}
_HEADING = re.compile(r"^#{1,4}\s*(.+?)\s*:?\s*$")
_SUBTASK = re.compile(r"^- \[([ x])\] (.+)$")
_DECISION = re.compile(r"^- (.+?)(?: — why: (.*?))?(?: \(impact: (high|medium|low)\))?$")
_RECURRING = re.compile(r"^- recurring \(x(\d+)\)(?: ALERT)?: (.+)$")


@dataclass(frozen=True, slots=True)
class Decision:
    text: str
    rationale: str = ""
    impact: str = "medium"
    seqs: tuple[int, ...] = ()  # the messages it came from

    def line(self) -> str:
        why = f" — why: {self.rationale}" if self.rationale else ""
        return f"- {self.text}{why} (impact: {self.impact}){cite(self.seqs)}"


@dataclass(frozen=True, slots=True)
class MemoryFacts:
    """What the summary must keep verbatim: from the memory, or parsed from a summary."""

    goal: str | None = None
    subtasks: tuple[tuple[str, bool], ...] = ()  # (name, done)
    phase: str | None = None
    decisions: tuple[Decision, ...] = ()
    error_patterns: tuple[tuple[str, int], ...] = ()  # (normalised pattern, count)
    from_memory: bool = False
    # seqs of the messages the goal, a subtask, a pattern came from ("goal",
    # "subtask:<name>", "pattern:<pattern>")
    sources: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def seqs_of(self, key: str) -> tuple[int, ...]:
        return self.sources.get(key, ())

    @property
    def open_subtasks(self) -> list[str]:
        return [name for name, done in self.subtasks if not done]

    @property
    def recurring(self) -> list[tuple[str, int]]:
        return [(p, n) for p, n in self.error_patterns if n >= 2]

    def is_empty(self) -> bool:
        return not (self.goal or self.subtasks or self.phase or self.decisions)


def facts_from_memory(memory: MemoryState) -> MemoryFacts:
    sources = {"goal": tuple(memory.goal_seqs)}
    sources |= {f"subtask:{t['name']}": tuple(t.get("seqs", ())) for t in memory.subtasks}
    sources |= {f"pattern:{p}": tuple(e.get("seqs", ())) for p, e in memory.error_patterns.items()}
    return MemoryFacts(
        goal=memory.goal,
        subtasks=tuple((t["name"], bool(t["done"])) for t in memory.subtasks),
        phase=memory.phase,
        decisions=tuple(
            Decision(
                d["decision"],
                d.get("rationale", ""),
                d.get("impact", "medium"),
                tuple(d.get("seqs", ())),
            )
            for d in memory.decisions
        ),
        error_patterns=tuple((p, int(e["count"])) for p, e in memory.error_patterns.items()),
        from_memory=True,
        sources={key: seqs for key, seqs in sources.items() if seqs},
    )


# ---------------------------------------------------------------- rendering


def goal_lines(facts: MemoryFacts) -> list[str]:
    lines = []
    if facts.goal:
        lines.append(f"Goal: {facts.goal}{cite(facts.seqs_of('goal'))}")
    if facts.phase:
        lines.append(f"Phase: {facts.phase}")
    if facts.subtasks:
        done = sum(1 for _, is_done in facts.subtasks if is_done)
        lines.append(f"Progress: {done}/{len(facts.subtasks)} subtasks done")
        lines += [subtask_line(facts, name, is_done) for name, is_done in facts.subtasks]
    return lines


def subtask_line(facts: MemoryFacts, name: str, done: bool = False) -> str:
    return f"- [{'x' if done else ' '}] {name}{cite(facts.seqs_of(f'subtask:{name}'))}"


def decision_lines(facts: MemoryFacts) -> list[str]:
    return [d.line() for d in facts.decisions]


def recurring_lines(facts: MemoryFacts) -> list[str]:
    return [recurring_line(facts, pattern, count) for pattern, count in facts.recurring]


def recurring_line(facts: MemoryFacts, pattern: str, count: int) -> str:
    alert = " ALERT" if count >= ERROR_ALERT_AFTER else ""
    return f"- recurring (x{count}){alert}: {pattern}{cite(facts.seqs_of(f'pattern:{pattern}'))}"


def render_summary(header: str, sections: dict[str, list[str]]) -> str:
    """The header, then each non-empty section in the fixed order."""
    blocks = [header]
    for key, title in SECTIONS.items():
        lines = sections.get(key) or []
        if lines:
            blocks.append(f"## {title}\n" + "\n".join(lines))
    return "\n\n".join(blocks)


# ---------------------------------------------------------------- parsing


@dataclass(slots=True)
class ParsedSummary:
    header: list[str] = field(default_factory=list)
    sections: dict[str, list[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # section keys as they appear

    @property
    def structured(self) -> bool:
        return bool(self.sections)


def parse_summary(text: str) -> ParsedSummary:
    """Split a summary at its `## <section>` headings (unknown headings stay in the
    section before them; text before the first heading is the header)."""
    parsed = ParsedSummary()
    current: list[str] = parsed.header
    for line in text.splitlines():
        match = _HEADING.match(line.strip())
        key = _KEY_BY_TITLE.get(match.group(1).lower()) if match else None
        if key is not None:
            current = parsed.sections.setdefault(key, [])
            if key not in parsed.order:
                parsed.order.append(key)
            continue
        if line.strip():
            current.append(line.rstrip())
    return parsed


def facts_from_summary(text: str | None) -> MemoryFacts:
    """The goal, subtasks, phase, decisions and recurring patterns a structured summary
    holds, with the seqs their lines cite (our own format; anything else yields empty
    facts)."""
    if not text:
        return MemoryFacts()
    parsed = parse_summary(text)
    goal, phase = None, None
    subtasks: list[tuple[str, bool]] = []
    sources: dict[str, tuple[int, ...]] = {}
    for raw in parsed.sections.get("goal", []):
        line, seqs, _ = split_cited(raw)
        if line.startswith("Goal: "):
            goal = line[6:].strip()
            sources["goal"] = seqs
        elif line.startswith("Phase: "):
            phase = line[7:].strip()
        elif match := _SUBTASK.match(line):
            subtasks.append((match.group(2), match.group(1) == "x"))
            sources[f"subtask:{match.group(2)}"] = seqs
    decisions = []
    for raw in parsed.sections.get("decisions", []):
        line, seqs, _ = split_cited(raw)
        if m := _DECISION.match(line):
            decisions.append(Decision(m.group(1), m.group(2) or "", m.group(3) or "medium", seqs))
    patterns = []
    for raw in parsed.sections.get("errors", []):
        line, seqs, _ = split_cited(raw)
        if m := _RECURRING.match(line):
            patterns.append((m.group(2), int(m.group(1))))
            sources[f"pattern:{m.group(2)}"] = seqs
    return MemoryFacts(
        goal,
        tuple(subtasks),
        phase,
        tuple(decisions),
        tuple(patterns),
        sources={key: seqs for key, seqs in sources.items() if seqs},
    )


def merge_facts(base: MemoryFacts, extra: MemoryFacts, *, max_decisions: int = 20) -> MemoryFacts:
    """`base` with what `extra` adds. A memory's facts stand as they are (a goal found in
    the messages only fills a memory that has none); otherwise the decisions are merged
    and the newest `max_decisions` kept (sentences found in messages, not a trail). The
    seqs of the same item in both are united."""
    same_goal = not base.goal or not extra.goal or squash(base.goal) == squash(extra.goal)
    sources = {
        key: merge_seqs(base.seqs_of(key), extra.seqs_of(key) if same_goal else ())
        if key == "goal"
        else merge_seqs(base.seqs_of(key), extra.seqs_of(key))
        for key in {*base.sources, *extra.sources}
    }
    sources = {key: seqs for key, seqs in sources.items() if seqs}
    if base.from_memory:
        decisions = _with_seqs(base.decisions, extra.decisions)
        return replace(base, goal=base.goal or extra.goal, decisions=decisions, sources=sources)
    merged = _unique(base.decisions, extra.decisions)
    return MemoryFacts(
        goal=base.goal or extra.goal,
        subtasks=base.subtasks or extra.subtasks,
        phase=base.phase or extra.phase,
        decisions=tuple(merged[-max_decisions:]) if max_decisions else (),
        error_patterns=_max_counts(base.error_patterns, extra.error_patterns),
        sources=sources,
    )


def _with_seqs(decisions: Iterable[Decision], others: Iterable[Decision]) -> tuple[Decision, ...]:
    """`decisions`, each with the seqs of the same decision among `others` added."""
    seqs: dict[str, tuple[int, ...]] = {}
    for other in others:
        key = squash(other.text)
        seqs[key] = merge_seqs(seqs.get(key, ()), other.seqs)
    return tuple(
        replace(d, seqs=merge_seqs(d.seqs, seqs.get(squash(d.text), ()))) for d in decisions
    )


def _unique(*groups: Iterable[Decision]) -> list[Decision]:
    found: dict[str, Decision] = {}
    for group in groups:
        for decision in group:
            key = squash(decision.text)
            known = found.get(key)
            if known is None:
                found[key] = decision
            else:  # the same decision again: one line, the seqs of both
                found[key] = replace(known, seqs=merge_seqs(known.seqs, decision.seqs))
    return list(found.values())


def _max_counts(*groups: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for group in groups:
        for pattern, count in group:
            counts[pattern] = max(count, counts.get(pattern, 0))
    return tuple(counts.items())


def squash(text: str) -> str:
    """Lowercase, whitespace collapsed: how presence is compared."""
    return " ".join(text.lower().split())
