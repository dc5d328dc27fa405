"""The fill: which history messages go in, and the parts cut to fit (SPEC §6 "Budget").

`fill` takes, in order, S, R, CA, the newest turn with its files, the pinned messages
with their chains, the summary, P up to its share of what is left, then runs the
strategy over the rest of the history with what remains (`layout` has the rules for
each step). Below the threshold nothing is filtered, but the hard room is never passed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, overload

from contextq.assembly import layout
from contextq.assembly.citations import CitationMap
from contextq.assembly.counting import frame_tokens, json_tokens
from contextq.assembly.pieces import Piece, text_piece
from contextq.assembly.plan import ContextPlan
from contextq.assembly.project import project_piece
from contextq.assembly.tool_results import CLEAR_STEP_SEQS
from contextq.assembly.work import Work, clear_tool_results, clearing_saves
from contextq.history.filtering import run_strategy
from contextq.history.formats import ANTHROPIC_OPENING
from contextq.history.strategies import short_of_minimum, token_budget
from contextq.history.types import Message

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


def head_cost(parts: Parts, plan: ContextPlan) -> int:
    """S, and (Anthropic) the room for an opening turn and the breakpoints."""
    cost = parts.system.cost if parts.system else 0
    if plan.target.format == "anthropic":
        enc = plan.target.encoding
        opening = {"type": "text", "text": ANTHROPIC_OPENING}
        mark = json_tokens({"cache_control": {"type": "ephemeral"}}, enc)
        cost += frame_tokens("user", enc) + json_tokens(opening, enc) + 2 * mark
    return cost


def fixed_cost(parts: Parts, plan: ContextPlan) -> int:
    extra = [p for p in (parts.custom_agent, parts.reminder) if p is not None]
    return head_cost(parts, plan) + sum(p.cost for p in extra)


def total_before(work: Work, parts: Parts, plan: ContextPlan) -> int:
    """The whole context before any filtering (usage_before): every part and message,
    files included; a window read counts the unread history by its stored total."""
    stored = plan.read.filter.history_tokens
    if plan.read.window is not None and stored is not None:
        # only the window was read: the stored total, and what the files add to it
        history = stored + sum(
            work.cost(i) - (work.history[i].token_count or 0) for i in work.attached
        )
    else:
        history = work.total()
    summary = parts.summary.cost if parts.summary else 0
    whole, _ = project_piece(plan.project, room=None, citations=CitationMap(), target=plan.target)
    project = whole.cost if whole is not None else 0
    return fixed_cost(parts, plan) + summary + project + history


def fill(
    work: Work,
    parts: Parts,
    plan: ContextPlan,
    *,
    runs: bool,
    limit: int,
    cut_seq: int | None,
    memory: HierarchicalMemory | None,
    citations: CitationMap,
) -> tuple[layout.Fill, Ran | None]:
    """Which history messages go in, the parts cut to fit (see `layout`); what the
    strategy did, when it ran."""
    f = plan.read.filter
    everything = set(range(len(work.history)))
    whole, _ = project_piece(plan.project, room=None, citations=citations, target=plan.target)
    if not runs and total_before(work, parts, plan) <= limit:
        parts.project = whole
        return layout.Fill(everything, protected=everything), None
    pinned = layout.pinned_indices(work, int(f.arguments.get("max_pinned", 10))) - work.required
    alone = sum(work.cost(i) for i in pinned if work.history[i].role != "system")
    head = head_cost(parts, plan)
    if runs and alone > limit - head:
        parts.custom_agent = parts.reminder = parts.summary = None
        return layout.pinned_only(work, pinned, head=head, hard=f.budget.hard_limit_tokens), None
    _clear_old_tool_results(work, parts, plan, limit=limit, protected=work.required | pinned)
    fixed = fixed_cost(parts, plan)
    anchored = sum(work.cost(i) for i in pinned)
    warnings = layout.fit_turn(work, limit - fixed - anchored)
    taken = fixed + anchored + sum(work.cost(i) for i in work.required)
    taken += _summary_and_project(
        work, parts, plan, room=limit - taken, citations=citations, warnings=warnings
    )
    result = _select(
        work,
        plan,
        parts,
        room=limit - taken + anchored,
        limit=limit,
        runs=runs,
        cut_seq=cut_seq,
        memory=memory,
    )
    kept = result.kept
    protected = work.required | pinned
    outside = taken - anchored - sum(work.cost(i) for i in work.required)
    outside += sum(p.cost for p in parts.preamble)
    if result.error is not None:  # fail-open: everything, within the hard room
        limit = f.budget.hard_limit_tokens
        runs = False
    layout.fit_history(work, kept, protected, limit - outside)
    if not runs and len(kept) < len(work.history):
        warnings.append(_OVER_HARD_ROOM)
    warnings += result.warnings
    minimum = int(f.arguments.get("min_messages_to_keep", 0))
    if len(kept) < min(minimum, len(work.history)):
        warnings.append(short_of_minimum(len(kept), minimum))
    return layout.Fill(kept, warnings, protected=protected, limit=limit), (
        result if (plan.read.filter.strategy != "noop" and runs) or result.error else None
    )


def _clear_old_tool_results(
    work: Work, parts: Parts, plan: ContextPlan, *, limit: int, protected: set[int]
) -> None:
    """Over the threshold or the hard room, old tool results go before any message: by
    the stepped line (a prefix that stays put), and by the exact line when that alone
    saves every message from being dropped (the whole history read, and then fitting)."""
    keep = plan.read.filter.keep_tool_results
    clear_tool_results(work, keep=keep, protected=protected, step=clear_step(work, limit))
    if plan.read.window is not None:
        return  # the older history is left out anyway
    summary = parts.summary.cost if parts.summary is not None else 0
    total = work.total() + fixed_cost(parts, plan) + summary
    if total <= limit:
        return
    if total - clearing_saves(work, keep=keep, protected=protected) <= limit:
        clear_tool_results(work, keep=keep, protected=protected, step=1)


def clear_step(work: Work, limit: int) -> int:
    """The clearing line's step in seqs: a power of two from 4 to `CLEAR_STEP_SEQS`, about
    a quarter of the messages `limit` holds at the history's average cost (a step the
    kept part of the history spans, so clearing reaches it; quantised, so it holds
    still from turn to turn)."""
    n = len(work.history)
    average = max(1, work.total() // n) if n else 1
    quarter = limit // average // 4
    step = 4
    while step * 2 <= min(CLEAR_STEP_SEQS, quarter):
        step *= 2
    return step


def _summary_and_project(
    work: Work,
    parts: Parts,
    plan: ContextPlan,
    *,
    room: int,
    citations: CitationMap,
    warnings: list[str],
) -> int:
    """The summary cut to `room` if need be, then P up to its share of what is left;
    returns their tokens."""
    taken = 0
    if parts.summary is not None:
        parts.summary, warning = layout.fit_summary_piece(
            parts.summary, parts.summary_text or "", room, work
        )
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


class Costed(Sequence[Message]):
    """History messages `indices` with `token_count` set to what they cost as sent, made
    on first access: a strategy that walks back from the newest message only ever makes
    the ones it looks at. (A message whose cost is its stored count is itself.)"""

    def __init__(self, work: Work, indices: list[int]) -> None:
        self._work = work
        self._indices = indices
        self._made: dict[int, Message] = {}

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, j: int) -> Message: ...
    @overload
    def __getitem__(self, j: slice) -> list[Message]: ...
    def __getitem__(self, j: int | slice) -> Message | list[Message]:
        if isinstance(j, slice):
            return [self[k] for k in range(*j.indices(len(self)))]
        found = self._made.get(j)
        if found is None:
            i = self._indices[j]
            message = self._work.history[i]
            cost = self._work.cost(i)
            found = message if cost == message.token_count else replace(message, token_count=cost)
            self._made[j] = found
        return found


@dataclass(slots=True)
class Ran:
    """What the strategy did."""

    kept: set[int]
    error: str | None = None
    cut_seq: int | None = None
    warnings: list[str] = field(default_factory=list)
    duration_ms: float = 0.0


def _select(
    work: Work,
    plan: ContextPlan,
    parts: Parts,
    *,
    room: int,
    limit: int,
    runs: bool,
    cut_seq: int | None,
    memory: HierarchicalMemory | None,
) -> Ran:
    """The strategy over the history but the turn's required messages, with `room`
    tokens (the pinned messages' included: strategies count them first)."""
    started = time.perf_counter()
    f = plan.read.filter
    rest = [i for i in range(len(work.history)) if i not in work.required]
    messages = Costed(work, rest)
    anchors = [j for j, i in enumerate(rest) if _anchor(work.history[i])]
    min_keep = max(0, int(f.arguments.get("min_messages_to_keep", 0)) - len(work.required))
    if not runs:  # only the hard room: the newest that fit, no trim, no cut
        selection = token_budget(
            messages,
            budget_tokens=room,
            min_messages_to_keep=min_keep,
            max_pinned=int(f.arguments.get("max_pinned", 10)),
            anchors=anchors,
        )
        return Ran({rest[j] for j in selection.kept} | work.required)
    overrides = _overrides(work, plan, room=room, limit=limit, min_keep=min_keep)
    overrides["cut_seq"] = _usable_cut(cut_seq, work, rest, plan)
    selection, error = run_strategy(
        messages, f, anchors=anchors, memory=memory, overrides=overrides
    )
    parts.preamble = [
        text_piece(m.text(), "user", "summary", plan.target) for m in selection.preamble
    ]
    return Ran(
        {rest[j] for j in selection.kept} | work.required,
        error=error,
        cut_seq=selection.cut_seq if error is None else None,
        warnings=[w for w in selection.warnings if not w.startswith("MIN_MESSAGES_TO_KEEP")],
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
    )


def _anchor(message: Message) -> bool:
    return message.pinned or message.role == "system"


def _overrides(
    work: Work, plan: ContextPlan, *, room: int, limit: int, min_keep: int
) -> dict[str, Any]:
    """The strategy's arguments for what is left: the room, the trim target (the
    hysteresis cut is to `trim_to` of the whole budget), the minimum and the window
    less the turn's own newest messages."""
    f = plan.read.filter
    trim = int(f.budget.budget_tokens * f.trim_to) - (limit - room)
    overrides: dict[str, Any] = {
        "budget_tokens": room,
        "trim_tokens": max(0, trim),
        "min_messages_to_keep": min_keep,
    }
    if "window_size" in f.arguments:
        window = int(f.arguments["window_size"])
        inside = sum(1 for i in work.required if i >= len(work.history) - window)
        overrides["window_size"] = max(1, window - inside)
    return overrides


def _usable_cut(cut_seq: int | None, work: Work, rest: list[int], plan: ContextPlan) -> int | None:
    """A stored cut point, unless a window read left out messages after it (then the
    history from it is over the budget anyway: cut anew)."""
    if cut_seq is None or plan.read.window is None:
        return cut_seq
    history = work.history
    first = next((history[i].seq for i in rest if not _anchor(history[i])), None)
    return cut_seq if first is not None and first <= cut_seq else None
