"""The fill: which history messages go in, and the parts cut to fit
(docs/context.md#what-is-taken-first).

`fill` takes, in order, S, R, CA, the newest turn with its files, the pinned messages
with their chains, the summary, P up to its share of what is left, then runs the
strategy over the rest of the history with what remains. The rules of each step:
`layout` (pinned messages over the hard room or the budget, the summary, the hard
room), `turn_fit` (the newest turn), `select` (the strategy with the carried cut point
and clearing line). Below the threshold nothing is filtered, but the hard room is never
passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contextq.assembly import layout
from contextq.assembly.citations import CitationMap
from contextq.assembly.clearing import applied_line, clear_below
from contextq.assembly.inputs import Carry
from contextq.assembly.plan import ContextPlan
from contextq.assembly.project import project_piece
from contextq.assembly.select import Ran, Selecting, select
from contextq.assembly.turn_fit import fit_pinned_user_files, fit_turn
from contextq.assembly.wire import Piece
from contextq.assembly.work import Work, attach_files, includable
from contextq.history.strategies import short_of_minimum

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory


@dataclass(slots=True)
class Parts:
    """The generated parts around the history."""

    system: Piece | None
    custom_agent: Piece | None
    reminder: Piece | None
    summary: Piece | None
    summary_text: str | None
    project: Piece | None = None
    project_room: int | None = None  # P's room, when a whole project did not fit it
    preamble: list[Piece] = field(default_factory=list)  # the hierarchical memory block
    # a bound target's reminders, each with the seq it was first sent after (R pinned)
    pinned_reminders: list[tuple[int, Piece]] = field(default_factory=list)


def head_cost(parts: Parts, plan: ContextPlan) -> int:
    """S, and the room the format's render may add (Anthropic: an opening turn and the
    cache breakpoints: `WireFormat.head_room`)."""
    cost = parts.system.cost if parts.system else 0
    return cost + plan.target.wire.head_room(plan.target.encoding)


def fixed_cost(parts: Parts, plan: ContextPlan) -> int:
    extra = [p for p in (parts.custom_agent, parts.reminder) if p is not None]
    extra += [p for _, p in parts.pinned_reminders]
    return head_cost(parts, plan) + sum(p.cost for p in extra)


def total_before(work: Work, parts: Parts, plan: ContextPlan) -> int:
    """The whole context before any filtering (usage_before): every part and message,
    files included; a window read counts the unread history by its stored total."""
    stored = plan.read.filter.history_tokens
    if plan.read.window is not None and stored is not None:
        # only the window was read: the stored total (the open encoding's: at the largest
        # factor for a closed tokenizer), the messages with files at what they cost
        unread = stored - sum(work.history[i].token_count or 0 for i in work.attached)
        history = plan.read.filter.limits.counting.upper(unread)
        history += sum(work.cost(i) for i in work.attached)
    else:
        history = work.total()
    summary = parts.summary.cost if parts.summary else 0
    whole, _ = project_piece(plan.project, room=None, citations=CitationMap(), target=plan.target)
    project = whole.cost if whole is not None else 0
    return fixed_cost(parts, plan) + summary + project + history


MAX_WIDENING = 8.0  # a window read again at most this many times as deep


def window_factor(
    work: Work, plan: ContextPlan, kept: set[int], token_count: int, cut_seq: int | None
) -> float | None:
    """How much deeper a token_budget window read should have gone: the service reads as
    many of the newest messages as the budget could hold *as stored*, but a message
    whose reasoning is left out (another vendor's, an earlier turn's the model strips)
    costs less as sent, so the whole window can fit with room to spare. On a first read
    (no cut point carried) that kept all of it under the budget, the window's stored
    tokens over what they would be without the reasoning left out; None otherwise (and
    when nothing of the kind was left out: stubs making a window fit are the clearing
    line's, whose window stays put)."""
    window = plan.read.window
    if window is None or window.past_tokens is None or cut_seq is not None:
        return None
    if len(kept) < len(work.history) or token_count >= plan.read.filter.budget.budget_tokens:
        return None
    stored = shrunk = 0
    for i in kept:
        original = work.original(i).token_count or 0
        stored += original
        if work.pieces.rendered(i) and work.pieces[i].reasoning_left is not None:
            shrunk += max(0, original - work.cost(i))
    if not shrunk or stored <= shrunk:
        return None
    return min(MAX_WIDENING, stored / (stored - shrunk))


def apply_carried_line(
    work: Work, plan: ContextPlan, carry: Carry, *, bound: bool = False
) -> int | None:
    """Clear the old tool results below the carried clearing line (never the newest
    `keep_tool_results`, the turn or pinned messages); returns the line applied. Under
    `noop` or a skipped filter only a `bound` target carries one (the hard room's)."""
    f = plan.read.filter
    if (f.skipped or f.strategy == "noop") and not bound:
        return None
    line = applied_line(work, carry.clear_seq, f.keep_tool_results)
    if line is None:
        return None
    pinned = layout.pinned_indices(work, f.max_pinned)
    clear_below(work, line, work.required | pinned)
    return line


def fill(
    work: Work,
    parts: Parts,
    plan: ContextPlan,
    *,
    runs: bool,
    limit: int,
    carry: Carry,
    line: int | None,
    memory: HierarchicalMemory | None,
    citations: CitationMap,
    defer: bool = False,
) -> tuple[layout.Fill, Ran | None]:
    """Which history messages go in, the parts cut to fit (see `layout`, `turn_fit`,
    `select`); what the strategy did, when it ran. `line`: the clearing line applied.
    `defer`: the carried cut point and line move only when `limit` forces them (a bound
    tool loop's later step), not when only over the threshold."""
    f = plan.read.filter
    everything = set(range(len(work.history)))
    whole, _ = project_piece(plan.project, room=None, citations=citations, target=plan.target)
    if not runs and total_before(work, parts, plan) <= limit:
        parts.project = whole
        return layout.Fill(everything, protected=everything), None
    pinned = layout.pinned_indices(work, f.max_pinned)
    _without_turn_files(work, pinned)
    head = head_cost(parts, plan)
    pinned_cut = layout.cut_pinned(
        work, pinned, f.budget.hard_limit_tokens - head, _room_name(plan, False)
    )
    pinned, left_out = set(pinned_cut.kept), set(pinned_cut.cut)
    warnings = [pinned_cut.warning] if pinned_cut.warning else []
    # pinned alone over the limit, or over what S with the history's system messages
    # (never dropped: they go with S), R and CA (taken before them) leave it: only S and
    # the pinned messages are sent (docs/context.md#pinned-messages: pinned are never dropped)
    if work.costs(pinned) > limit - fixed_cost(parts, plan):
        parts.custom_agent = parts.reminder = parts.summary = None
        parts.pinned_reminders = []
        hard = f.budget.hard_limit_tokens
        room = hard - head - work.costs(i for i in pinned if i != work.u)
        if work.u in pinned:
            warnings += fit_pinned_user_files(work, room, room_name=_room_name(plan, False))
        return layout.pinned_only(work, pinned, limit=hard, warnings=warnings), None
    fixed = fixed_cost(parts, plan)
    turn_fit = fit_turn(
        work, _turn_room(work, parts, plan, pinned, limit), pinned=pinned,
        room_name=_room_name(plan, runs),
    )  # fmt: skip
    warnings += turn_fit.warnings
    left_out |= turn_fit.left_out
    turn = work.required - left_out
    anchored = work.costs(pinned - turn)
    taken = fixed + anchored + work.costs(turn)
    # a summary cut to fit gets at most half of what S and the pinned messages leave,
    # whatever the turn's size, so that its cut stays the same from turn to turn
    summary_room = min(limit - taken, (limit - fixed - anchored) // 2)
    taken += _summary_and_project(
        work, parts, plan, room=limit - taken, summary_room=summary_room,
        citations=citations, warnings=warnings,
    )  # fmt: skip
    how = Selecting(
        rest=[i for i in range(len(work.history)) if i not in turn and i not in left_out],
        turn=turn,
        protected=work.required | pinned,
        room=limit - taken + anchored,
        limit=limit,
        runs=runs,
        defer=defer,
    )
    result = select(work, plan, how, cut_seq=carry.cut_seq, line=line, memory=memory)
    parts.preamble = result.preamble
    return _fitted(work, parts, plan, result, how=how, outside=taken - anchored - work.costs(turn),
                   loose=sorted(turn - pinned), warnings=warnings)  # fmt: skip


def _turn_room(work: Work, parts: Parts, plan: ContextPlan, pinned: set[int], limit: int) -> int:
    """The newest turn's room: what S, R, CA and the pinned messages leave. A turn that
    starts with its user message and has no pinned message before it may also take
    what the format keeps for a list's head (Anthropic: the opening turn and the
    breakpoint before the turn, `WireFormat.turn_room`): a turn over the rest leaves the
    history, the summary and P no room, so nothing stands before it and neither is
    sent."""
    room = limit - fixed_cost(parts, plan) - work.costs(pinned - work.required)
    bonus = plan.target.wire.turn_room(plan.target.encoding)
    if not bonus or work.u is None:
        return room
    before = [i for i in pinned - work.required if work.history[i].role != "system"]
    return room if before else room + bonus


def _fitted(
    work: Work,
    parts: Parts,
    plan: ContextPlan,
    result: Ran,
    *,
    how: Selecting,
    outside: int,
    loose: list[int],
    warnings: list[str],
) -> tuple[layout.Fill, Ran | None]:
    """The strategy's choice fitted to the limit (the hard room when it failed open),
    with the warnings of what was left out. `loose`: the newest turn's messages that may
    still shrink should the count as sent pass the limit (`layout.shrink_loose`)."""
    f = plan.read.filter
    kept = result.kept
    limit, runs = how.limit, how.runs
    if result.error is not None:  # fail-open: everything, within the hard room
        limit = f.budget.hard_limit_tokens
        runs = False
    outside += _fit_preamble(
        work, parts, kept, how.protected, room=limit - outside, warnings=warnings
    )
    layout.fit_history(work, kept, how.protected, limit - outside)
    if not runs and len(kept) < len(work.history):
        warnings.append(_OVER_HARD_ROOM)
    warnings += result.warnings
    minimum = f.min_messages_to_keep
    if len(kept) < min(minimum, len(work.history)):
        warnings.append(short_of_minimum(len(kept), minimum))
    ran = result if (f.strategy != "noop" and runs) or result.error else None
    if ran is None and result.clear_seq is not None:
        ran = Ran(kept, clear_seq=result.clear_seq)  # the hard room moved the line
    protected = how.protected | how.turn
    room_name = _room_name(plan, runs)
    return layout.Fill(kept, warnings, protected=protected, limit=limit, loose=loose,
                       room_name=room_name), ran  # fmt: skip


def _fit_preamble(
    work: Work,
    parts: Parts,
    kept: set[int],
    protected: set[int],
    *,
    room: int,
    warnings: list[str],
) -> int:
    """The hierarchical memory block, unless it does not fit `room` next to what cannot
    be left out (the turn, pinned messages): then it is left out, with a warning (it is
    generated from the history, which stays in the store). Returns its tokens."""
    block = sum(p.cost for p in parts.preamble)
    if not block or work.costs(kept & protected) + block <= room:
        return block
    warnings.append(
        f"the hierarchical memory block ({block} tokens) does not fit next to the newest "
        "turn and the pinned messages: left out"
    )
    parts.preamble = []
    return 0


def _without_turn_files(work: Work, pinned: set[int]) -> None:
    """A pinned newest user message counts without its files among the pinned ones:
    they go in with the turn, as many as fit (`turn_fit`)."""
    u = work.u
    if u is not None and u in pinned and work.history[u].file_ids:
        keep = set(work.history[u].file_ids) - set(includable(work, u))
        attach_files(work, u, [f for f in work.history[u].file_ids if f in keep])


def _room_name(plan: ContextPlan, runs: bool) -> str:
    f = plan.read.filter
    model = f.limits.model or f.limits.catalog_id or "this model"
    if runs:
        return f"the context budget ({f.budget.budget_tokens:,} tokens for {model})"
    return f"the model's room ({f.budget.hard_limit_tokens:,} tokens for {model})"


def _summary_and_project(
    work: Work,
    parts: Parts,
    plan: ContextPlan,
    *,
    room: int,
    summary_room: int,
    citations: CitationMap,
    warnings: list[str],
) -> int:
    """The summary cut to `summary_room` when it does not fit `room` (to a size stable
    from turn to turn), then P up to its share of what is left; returns their tokens."""
    taken = 0
    if parts.summary is not None:
        cut_room = room if parts.summary.cost <= room else summary_room
        parts.summary, warning = layout.fit_summary_piece(
            parts.summary, parts.summary_text or "", cut_room, work,
            limit=plan.read.filter.budget.hard_limit_tokens,
        )  # fmt: skip
        warnings += [warning] if warning else []
        taken += parts.summary.cost if parts.summary is not None else 0
    share = int(plan.read.filter.project_share * max(0, room - taken))
    parts.project, short = project_piece(
        plan.project, room=share, citations=citations, target=plan.target
    )
    parts.project_room = share if short else None
    return taken + (parts.project.cost if parts.project is not None else 0)


_OVER_HARD_ROOM = (
    "the context was over the model's hard room (context_limit - max_output_tokens - "
    "tool definitions) without filtering: the oldest history was left out"
)
