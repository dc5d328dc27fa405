"""History strategies (SPEC §4): plain functions over message lists, no I/O.

Each strategy takes the history (oldest first, with `token_count` precomputed) and
keyword-only options, and returns a `Selection`: the indices it keeps, ascending, so
the output is always a subsequence of the input. Every filtering strategy keeps:

- system messages;
- pinned messages (the newest `max_pinned` of them) with their whole tool chain;
- tool chains whole: an assistant message with `tool_calls` and its results stay or
  go together, so the output never starts with (or holds) an orphan tool result.

`token_budget` walks from the newest message backwards over the stored counts and
stops at the first unit that does not fit: its cost grows with what it keeps, not
with the history length (the only full pass is the anchor scan for system/pinned
messages, which the caller can skip by passing `anchors`).

`contextq.history.filtering.filter_history` decides whether and how a strategy runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contextq.history.chains import Unit, unit_at
from contextq.history.message_tokens import token_count
from contextq.history.options import DEFAULT_WINDOW_SIZE
from contextq.history.types import Message

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory

CRITICAL_SHARE = 0.25  # hierarchical: budget share kept for older critical messages
MEMORY_BLOCK_SHARE = 4  # the hierarchical memory block takes at most 1/4 of the budget


@dataclass(slots=True)
class Selection:
    """What a strategy keeps: indices into its input (ascending) and generated messages."""

    kept: list[int]
    preamble: list[Message] = field(default_factory=list)  # e.g. the hierarchical memory block


# ---------------------------------------------------------------- anchors


def find_anchors(messages: Sequence[Message]) -> list[int]:
    """Indices of system and pinned messages (one pass; the service may pass its own)."""
    return [i for i, m in enumerate(messages) if m.pinned or m.role == "system"]


def _anchor_units(
    messages: Sequence[Message], anchors: Sequence[int] | None, max_pinned: int
) -> dict[int, Unit]:
    if anchors is None:
        anchors = find_anchors(messages)
    units: dict[int, Unit] = {}
    pinned_left = max_pinned
    for i in reversed(anchors):  # the newest pinned messages win
        message = messages[i]
        if message.role != "system":
            if not message.pinned or pinned_left <= 0:
                continue
            pinned_left -= 1
        unit = unit_at(messages, i)
        if unit.members:
            units[unit.start] = unit
    return units


def _cost(messages: Sequence[Message], unit: Unit) -> int:
    total = 0
    for i in unit.members:
        message = messages[i]
        count = message.token_count
        total += token_count(message) if count is None else count
    return total


def _merge(anchor_units: Mapping[int, Unit], kept_units: list[Unit]) -> list[int]:
    starts = set(anchor_units)
    indices: list[int] = []
    for unit in anchor_units.values():
        indices.extend(unit.members)
    for unit in kept_units:
        if unit.start not in starts:
            indices.extend(unit.members)
    indices.sort()
    return indices


# ---------------------------------------------------------------- strategies


def noop(messages: Sequence[Message]) -> Selection:
    """Everything, as is."""
    return Selection(list(range(len(messages))))


def _units_newest_first(
    messages: Sequence[Message], anchor_units: Mapping[int, Unit]
) -> Iterator[Unit]:
    """Non-anchor units from the newest backwards; a tool chain is one unit. Lazy, so a
    walk that stops early never looks at older messages."""
    i = len(messages) - 1
    while i >= 0:
        unit = unit_at(messages, i)
        i = unit.start - 1
        if unit.start not in anchor_units and unit.members:
            yield unit


def _walk_budget(
    messages: Sequence[Message],
    anchor_units: Mapping[int, Unit],
    *,
    budget_tokens: int,
    hard_limit_tokens: int | None,
    min_messages_to_keep: int,
) -> list[Unit]:
    """The newest non-anchor units that fit next to the anchors (newest first)."""
    hard = budget_tokens if hard_limit_tokens is None else max(hard_limit_tokens, budget_tokens)
    used = sum(_cost(messages, u) for u in anchor_units.values())
    kept: list[Unit] = []
    kept_messages = 0
    newest = len(messages) - 1
    for unit in _units_newest_first(messages, anchor_units):
        cost = _cost(messages, unit)
        fits = used + cost <= budget_tokens
        needed = kept_messages < min_messages_to_keep and used + cost <= hard
        if not (fits or needed or unit.end == newest):
            break
        kept.append(unit)
        used += cost
        kept_messages += len(unit.members)
    return kept


def token_budget(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    hard_limit_tokens: int | None = None,
    min_messages_to_keep: int = 10,
    max_pinned: int = 10,
    anchors: Sequence[int] | None = None,
) -> Selection:
    """Keep system, pinned, then the newest units that fit `budget_tokens`.

    The newest `min_messages_to_keep` messages are kept even past the budget as long
    as the total stays within `hard_limit_tokens` ("where possible"); the newest unit
    is always kept. Stops at the first unit that does not fit (no gaps in the tail).
    """
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    kept = _walk_budget(
        messages,
        anchor_units,
        budget_tokens=budget_tokens,
        hard_limit_tokens=hard_limit_tokens,
        min_messages_to_keep=min_messages_to_keep,
    )
    return Selection(_merge(anchor_units, kept))


def sliding_window(
    messages: Sequence[Message],
    *,
    window_size: int = DEFAULT_WINDOW_SIZE,
    max_pinned: int = 10,
    anchors: Sequence[int] | None = None,
) -> Selection:
    """Keep system, pinned, and the newest `window_size` messages (chains whole: a
    chain that would cross the window edge is left out, unless it is the newest)."""
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    kept: list[Unit] = []
    count = 0
    newest = len(messages) - 1
    for unit in _units_newest_first(messages, anchor_units):
        # only the newest unit may exceed the window (a chain is never split)
        if count + len(unit.members) > window_size and unit.end != newest:
            break
        kept.append(unit)
        count += len(unit.members)
    return Selection(_merge(anchor_units, kept))


def hierarchical(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    hard_limit_tokens: int | None = None,
    min_messages_to_keep: int = 10,
    max_pinned: int = 10,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
    compression_threshold: int | None = None,
    recent_actions: int | None = None,
) -> Selection:
    """The memory block (GOAL / KEY DECISIONS / PREVIOUS ACTIONS / RECENT ACTIONS) as a
    preamble, the newest messages that fit the rest of the budget, then older critical
    messages (decisions, errors, importance > 0.7) while room is left."""
    from contextq.history.memory import HierarchicalMemory

    if memory is None:
        memory = HierarchicalMemory.from_messages(
            messages,
            compression_threshold=compression_threshold,
            recent_to_keep=recent_actions,
        )
    block = memory.render(max_tokens=max(0, budget_tokens // MEMORY_BLOCK_SHARE))
    preamble = [Message(role="user", content=block, kind=None)] if block else []
    block_tokens = sum(token_count(m) for m in preamble)
    room = max(0, budget_tokens - block_tokens)
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    tail = _walk_budget(  # the recent tail first, leaving a share for older critical ones
        messages,
        anchor_units,
        budget_tokens=int(room * (1 - CRITICAL_SHARE)),
        hard_limit_tokens=None if hard_limit_tokens is None else hard_limit_tokens - block_tokens,
        min_messages_to_keep=min_messages_to_keep,
    )
    kept = set(_merge(anchor_units, tail))
    used = sum(token_count(messages[i]) for i in kept)
    tail_start = tail[-1].start if tail else len(messages)
    used = _fill_back(messages, kept, tail_start, room=room, used=used, critical_only=True)
    _fill_back(messages, kept, tail_start, room=room, used=used, critical_only=False)
    return Selection(sorted(kept), preamble)


def _fill_back(
    messages: Sequence[Message],
    kept: set[int],
    before: int,
    *,
    room: int,
    used: int,
    critical_only: bool,
) -> int:
    """Add units older than index `before` to `kept`, newest first, while `room` allows:
    with `critical_only`, every critical unit that fits (decisions, errors, importance >
    0.7); otherwise units up to the first that does not fit. Returns the tokens used."""
    from contextq.history.memory import CRITICAL_IMPORTANCE, score_message

    i = before - 1
    while i >= 0:
        unit = unit_at(messages, i)
        i = unit.start - 1
        if not unit.members or unit.members[0] in kept:
            continue
        if critical_only and (
            max(score_message(messages[j]) for j in unit.members) <= CRITICAL_IMPORTANCE
        ):
            continue
        cost = _cost(messages, unit)
        if used + cost > room:
            if critical_only:
                continue
            break
        kept.update(unit.members)
        used += cost
    return used
