"""History strategies (docs/history.md#history-strategies): plain functions over message lists, no
I/O.

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
messages, which the caller can skip by passing `anchors`). No strategy keeps anything
past the budget: `MIN_MESSAGES_TO_KEEP` gives way to it (with a warning), and the
newest turn is the assembly's to keep or preview (`contextq.assembly`).

`contextq.history.filtering.filter_history` decides whether and how a strategy runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contextq.history.chains import Unit, unit_at
from contextq.history.memory import CRITICAL_IMPORTANCE, HierarchicalMemory, score_message
from contextq.history.message_tokens import token_count
from contextq.history.pinned import protected_anchors
from contextq.history.types import Message
from contextq.strategy_options import DEFAULT_MAX_PINNED, DEFAULT_WINDOW_SIZE

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory
    from contextq.history.memory_options import MemoryOptions

CRITICAL_SHARE = 0.25  # hierarchical: budget share kept for older critical messages
MEMORY_BLOCK_SHARE = 4  # the hierarchical memory block takes at most 1/4 of the budget


@dataclass(slots=True)
class Selection:
    """What a strategy keeps: indices into its input (ascending) and generated messages."""

    kept: list[int]
    preamble: list[Message] = field(default_factory=list)  # e.g. the hierarchical memory block
    cut_seq: int | None = None  # token_budget: where the kept tail starts (hysteresis)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- anchors


def _anchor_units(
    messages: Sequence[Message], anchors: Sequence[int] | None, max_pinned: int
) -> dict[int, Unit]:
    return {
        unit.start: unit
        for _, unit in protected_anchors(messages, max_pinned, anchors)
        if unit.members
    }


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


def _fitting_units(
    messages: Sequence[Message], anchor_units: Mapping[int, Unit], budget_tokens: int
) -> tuple[list[tuple[Unit, int]], bool]:
    """The newest non-anchor units that fit next to the anchors, newest first, with their
    costs; and whether that is all of them (the whole history fits)."""
    used = sum(_cost(messages, u) for u in anchor_units.values())
    fitting: list[tuple[Unit, int]] = []
    for unit in _units_newest_first(messages, anchor_units):
        cost = _cost(messages, unit)
        if used + cost > budget_tokens:
            return fitting, False
        fitting.append((unit, cost))
        used += cost
    return fitting, True


def _trimmed(
    fitting: list[tuple[Unit, int]],
    *,
    start_tokens: int,
    trim_tokens: int,
    min_messages_to_keep: int,
) -> tuple[list[Unit], bool]:
    """Of the fitting units (newest first), those within `trim_tokens`, then more while
    fewer than `min_messages_to_keep` messages are kept; and whether the minimum was met."""
    used = start_tokens
    kept: list[Unit] = []
    count = 0
    for unit, cost in fitting:
        if used + cost > trim_tokens and count >= min_messages_to_keep:
            break
        kept.append(unit)
        used += cost
        count += len(unit.members)
    return kept, count >= min_messages_to_keep


def _walk_budget(
    messages: Sequence[Message],
    anchor_units: Mapping[int, Unit],
    *,
    budget_tokens: int,
    min_messages_to_keep: int,
    trim_tokens: int | None = None,
) -> tuple[list[Unit], str | None]:
    """The newest non-anchor units that fit next to the anchors (newest first): up to
    `trim_tokens` (default: the budget), then on while fewer than `min_messages_to_keep`
    messages are kept and the budget allows. Returns the units and, when the budget
    stopped it short of the minimum, a warning."""
    fitting, everything = _fitting_units(messages, anchor_units, budget_tokens)
    target = budget_tokens if trim_tokens is None else min(trim_tokens, budget_tokens)
    anchored = sum(_cost(messages, u) for u in anchor_units.values())
    kept, enough = _trimmed(
        fitting,
        start_tokens=anchored,
        trim_tokens=target,
        min_messages_to_keep=min_messages_to_keep,
    )
    if enough or everything:
        return kept, None
    return kept, short_of_minimum(sum(len(u.members) for u in kept), min_messages_to_keep)


def short_of_minimum(kept: int, minimum: int) -> str:
    return (
        f"MIN_MESSAGES_TO_KEEP ({minimum}) gave way to the budget: only {kept} "
        "of the newest messages fit"
    )


def token_budget(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    min_messages_to_keep: int = 10,
    max_pinned: int = DEFAULT_MAX_PINNED,
    anchors: Sequence[int] | None = None,
    trim_tokens: int | None = None,
    cut_seq: int | None = None,
    trim_always: bool = False,
) -> Selection:
    """Keep system, pinned, then the newest units that fit `budget_tokens`, stopping at
    the first that does not fit (no gaps in the tail).

    Hysteresis (docs/context.md#the-cut-point-and-a-prefix-that-stays-put): with `cut_seq` (a cut
    point kept from an earlier request), every unit from that seq on is kept as long as they all fit
    the budget; otherwise (or with no cut point) the tail is cut down to `trim_tokens` and
    `Selection.cut_seq` says where it now starts. A new cut starts at a turn (a user message) when
    one is near enough (`_at_turn_start`): the kept history opens with the message that prompted it,
    and the next cut comes no sooner than a cut mid-turn would. `trim_always`: cut down to
    `trim_tokens` even when everything fits the budget (the prefix changes in this answer
    anyway: the caller cleared old tool results), so that the next change comes as late
    as a cut's would. The newest `min_messages_to_keep` messages are kept while the
    budget holds them (never past it: then fewer, with a warning).
    """
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    if cut_seq is not None:
        kept = _from_cut(messages, anchor_units, cut_seq=cut_seq, budget_tokens=budget_tokens)
        if kept is not None:
            return Selection(_merge(anchor_units, kept), cut_seq=cut_seq)
    fitting, everything = _fitting_units(messages, anchor_units, budget_tokens)
    if everything and trim_tokens is not None and not trim_always:  # nothing to drop: no cut
        return Selection(_merge(anchor_units, [u for u, _ in fitting]))
    anchored = sum(_cost(messages, u) for u in anchor_units.values())
    kept, enough = _trimmed(
        fitting,
        start_tokens=anchored,
        trim_tokens=budget_tokens if trim_tokens is None else min(trim_tokens, budget_tokens),
        min_messages_to_keep=min_messages_to_keep,
    )
    if trim_tokens is not None and not (everything and len(kept) == len(fitting)):
        kept = _at_turn_start(messages, kept, min_messages_to_keep)
    count = sum(len(u.members) for u in kept)
    warning = None if enough or everything else short_of_minimum(count, min_messages_to_keep)
    new_cut: int | None = None
    if kept:
        new_cut = messages[kept[-1].start].seq
    elif messages:
        new_cut = messages[-1].seq + 1
    return Selection(
        _merge(anchor_units, kept), cut_seq=new_cut, warnings=[warning] if warning else []
    )


def starts_turn(message: Message) -> bool:
    """A user message that is not a tool result (made only of `tool_result` parts)."""
    if message.role != "user":
        return False
    content = message.content
    return not (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") == "tool_result" for p in content)
    )


def _at_turn_start(
    messages: Sequence[Message], kept: list[Unit], min_messages_to_keep: int
) -> list[Unit]:
    """`kept` (newest first) less its oldest units up to the oldest turn start (a user
    message) among them, as long as that leaves at least `min_messages_to_keep` messages
    and half the kept tokens; `kept` as is otherwise (a run of tool calls with no user
    message in it: the cut stays at a unit)."""
    if not kept or starts_turn(messages[kept[-1].start]):
        return kept
    total = sum(_cost(messages, u) for u in kept)
    count = sum(len(u.members) for u in kept)
    dropped = dropped_count = 0
    for n in range(len(kept) - 1, 0, -1):
        dropped += _cost(messages, kept[n])
        dropped_count += len(kept[n].members)
        if dropped * 2 > total or count - dropped_count < min_messages_to_keep:
            return kept
        if starts_turn(messages[kept[n - 1].start]):
            return kept[:n]
    return kept


def _from_cut(
    messages: Sequence[Message],
    anchor_units: Mapping[int, Unit],
    *,
    cut_seq: int,
    budget_tokens: int,
) -> list[Unit] | None:
    """Every non-anchor unit starting at or after `cut_seq`, or None when they do not all
    fit the budget (the budget is exceeded again: cut anew)."""
    used = sum(_cost(messages, u) for u in anchor_units.values())
    kept: list[Unit] = []
    for unit in _units_newest_first(messages, anchor_units):
        if messages[unit.start].seq < cut_seq:
            break
        used += _cost(messages, unit)
        if used > budget_tokens:
            return None
        kept.append(unit)
    return kept


def sliding_window(
    messages: Sequence[Message],
    *,
    window_size: int = DEFAULT_WINDOW_SIZE,
    min_messages_to_keep: int = 0,
    max_pinned: int = DEFAULT_MAX_PINNED,
    anchors: Sequence[int] | None = None,
) -> Selection:
    """Keep system, pinned, and the newest max(`window_size`, `min_messages_to_keep`)
    messages (chains whole: a chain that would cross the window edge is left out, unless
    it is the newest). The caller fits the result to the budget."""
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    window = max(window_size, min_messages_to_keep)
    kept: list[Unit] = []
    count = 0
    newest = len(messages) - 1
    for unit in _units_newest_first(messages, anchor_units):
        # only the newest unit may exceed the window (a chain is never split)
        if count + len(unit.members) > window and unit.end != newest:
            break
        kept.append(unit)
        count += len(unit.members)
    return Selection(_merge(anchor_units, kept))


def hierarchical(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    min_messages_to_keep: int = 10,
    max_pinned: int = DEFAULT_MAX_PINNED,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
    memory_options: MemoryOptions | None = None,
) -> Selection:
    """The memory block (GOAL / KEY DECISIONS / PREVIOUS ACTIONS / RECENT ACTIONS) as a
    preamble, the newest messages that fit the rest of the budget, then older critical
    messages (decisions, errors, importance > 0.7) while room is left.

    `memory_options` (the conversation's `memory_options` with the strategy's
    `compression_threshold` / `recent_actions` over them) take effect: the stored memory
    is reconfigured with them (compressing when its working memory is over the new
    limit), and the block is kept within their `max_context_tokens`."""
    if memory is None:
        memory = HierarchicalMemory.from_messages(messages, options=memory_options)
    elif memory_options is not None and memory_options != memory.options:
        memory.configure(memory_options)
    limit = budget_tokens // MEMORY_BLOCK_SHARE
    if memory_options is not None:
        limit = min(limit, memory_options.max_context_tokens)
    block = memory.render(max_tokens=max(0, limit))
    preamble = [Message(role="user", content=block, kind=None)] if block else []
    block_tokens = sum(token_count(m) for m in preamble)
    room = max(0, budget_tokens - block_tokens)
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    tail, warning = _walk_budget(  # the recent tail first, leaving a share for older critical ones
        messages,
        anchor_units,
        budget_tokens=room,
        trim_tokens=int(room * (1 - CRITICAL_SHARE)),
        min_messages_to_keep=min_messages_to_keep,
    )
    kept = set(_merge(anchor_units, tail))
    used = sum(token_count(messages[i]) for i in kept)
    tail_start = tail[-1].start if tail else len(messages)
    used = _fill_back(messages, kept, tail_start, room=room, used=used, critical_only=True)
    _fill_back(messages, kept, tail_start, room=room, used=used, critical_only=False)
    return Selection(sorted(kept), preamble, warnings=[warning] if warning else [])


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
