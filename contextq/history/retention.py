"""Before a summary is accepted (docs/history.md#compaction): the goal, each open subtask, each
decision and each error pattern seen at least 3 times must be in it; what is missing is appended
verbatim from memory. And `fit_summary`, which cuts a structured summary to a smaller
model's room, keeping the memory-backed sections first.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from contextq import calibration
from contextq.history.memory_actions import ERROR_ALERT_AFTER
from contextq.history.seq_markers import cite
from contextq.history.summary_format import (
    SECTIONS,
    Decision,
    MemoryFacts,
    parse_summary,
    recurring_line,
    render_summary,
    squash,
    subtask_line,
)
from contextq.tokens import DEFAULT_ENCODING, count_tokens, get_encoding, truncate_to_tokens

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LOWER_BUT_N = str.maketrans(
    string.ascii_uppercase.replace("N", ""), string.ascii_lowercase.replace("n", "")
)


@dataclass(frozen=True, slots=True)
class CheckedItem:
    label: str  # "goal: …", "subtask: …", "decision: …", "error pattern: …"
    needle: str  # what must appear (squashed; numbers → N for error patterns)
    line: str  # what is appended when it is missing
    numbers_masked: bool = False  # an error pattern: compared with numbers as N


@dataclass(frozen=True, slots=True)
class Retention:
    checked: int
    missing: tuple[CheckedItem, ...]

    @property
    def share(self) -> float:
        """Share of the checked items present (1.0 when nothing was checked)."""
        if not self.checked:
            return 1.0
        return round((self.checked - len(self.missing)) / self.checked, 4)


def checked_items(facts: MemoryFacts) -> list[CheckedItem]:
    items: list[CheckedItem] = []
    if facts.goal:
        line = f"Goal: {facts.goal}{cite(facts.seqs_of('goal'))}"
        items.append(CheckedItem(f"goal: {facts.goal}", squash(facts.goal), line))
    for name in facts.open_subtasks:
        items.append(CheckedItem(f"subtask: {name}", squash(name), subtask_line(facts, name)))
    for decision in facts.decisions:
        items.append(_decision_item(decision))
    for pattern, count in facts.error_patterns:
        if count >= ERROR_ALERT_AFTER:
            items.append(
                CheckedItem(  # a pattern is lowercase text whose numbers became "N"
                    f"error pattern: {pattern}",
                    " ".join(pattern.split()),
                    recurring_line(facts, pattern, count),
                    numbers_masked=True,
                )
            )
    return items


def _decision_item(decision: Decision) -> CheckedItem:
    return CheckedItem(f"decision: {decision.text}", squash(decision.text), decision.line())


def check_retention(summary: str, facts: MemoryFacts) -> Retention:
    items = checked_items(facts)
    plain = squash(summary)
    # as patterns are written: lowercase but for N, numbers as N (`port 5432` → `port N`)
    masked = _NUMBER.sub("N", " ".join(summary.translate(_LOWER_BUT_N).split()))
    missing = tuple(
        item for item in items if item.needle not in (masked if item.numbers_masked else plain)
    )
    return Retention(len(items), missing)


def repair(summary: str, retention: Retention) -> tuple[str, list[str]]:
    """Append the missing items (under `## Restored from memory`); returns the text and
    the labels of what was appended."""
    if not retention.missing:
        return summary, []
    block = "\n".join(item.line for item in retention.missing)
    text = f"{summary.rstrip()}\n\n## {SECTIONS['restored']}\n{block}"
    return text, [item.label for item in retention.missing]


# ---------------------------------------------------------------- fitting

# what is kept first when a summary must shrink
_PRIORITY = ("goal", "decisions", "restored", "errors", "state", "files", "narrative")
_NOTE_RESERVE = 48


def fit_summary(summary: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """`summary` cut to at most `max_tokens`: its memory-backed sections first (goal,
    decisions, restored items), then errors, state, files, and the narrative last, with a
    note of what was cut. A summary that is not structured keeps its head."""
    if max_tokens <= 0:
        return ""
    if count_tokens(summary, encoding) <= max_tokens:
        return summary
    name, family = calibration.split_counter(encoding)
    if family is not None:  # a model's counter: choose in its encoding, within the room
        # the summary's factor leaves, then make sure of the calibrated count
        cut = fit_summary(summary, calibration.open_room(max_tokens, summary, family), name)
        return truncate_to_tokens(cut, max_tokens, encoding)[0]
    parsed = parse_summary(summary)
    if not parsed.structured:
        return _cut_plain(summary, max_tokens, encoding)
    enc = get_encoding(encoding)
    header = "\n".join(parsed.header)
    room = max_tokens - len(enc.encode_ordinary(header)) - _NOTE_RESERVE
    kept: dict[str, list[str]] = {}
    notes: list[str] = []
    for key in _PRIORITY:
        lines = parsed.sections.get(key, [])
        if not lines:
            continue
        cost = len(enc.encode_ordinary(SECTIONS[key])) + 4
        chosen, spent = _fit_lines(lines, room - cost, enc, newest_first=key == "narrative")
        if chosen:
            kept[key] = chosen
            room -= spent + cost
        if len(chosen) < len(lines):
            notes.append(f"{SECTIONS[key].lower()} {len(chosen)} of {len(lines)} lines")
    # the note says what was cut, not the room: the same cut reads the same whatever
    # room it was made for (a summary is part of the context's stable prefix,
    # docs/context.md#the-cut-point-and-a-prefix-that-stays-put)
    note = f"[cut to fit: {'; '.join(notes)}]"
    text = render_summary("\n".join([*parsed.header, note]), kept)
    return truncate_to_tokens(text, max_tokens, encoding)[0]


def _fit_lines(
    lines: list[str], room: int, enc: object, *, newest_first: bool
) -> tuple[list[str], int]:
    encode = enc.encode_ordinary  # type: ignore[attr-defined]
    order = range(len(lines) - 1, -1, -1) if newest_first else range(len(lines))
    taken: list[int] = []
    spent = 0
    for i in order:
        cost = len(encode(lines[i])) + 1
        if spent + cost > room:
            if newest_first:
                break
            continue
        taken.append(i)
        spent += cost
    return [lines[i] for i in sorted(taken)], spent


def _cut_plain(summary: str, max_tokens: int, encoding: str) -> str:
    total = count_tokens(summary, encoding)
    kept = truncate_to_tokens(summary, max(1, max_tokens - _NOTE_RESERVE), encoding)[0]
    note = f"\n[cut to fit: {max_tokens - _NOTE_RESERVE} of {total} tokens kept]"
    return truncate_to_tokens(kept + note, max_tokens, encoding)[0]
