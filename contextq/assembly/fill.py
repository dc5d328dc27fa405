"""The fill: which history messages go in, and the parts cut to fit (SPEC §6 "Budget").

`fill` takes, in order, S, R, CA, the newest turn with its files, the pinned messages
with their chains, the summary, P up to its share of what is left, then runs the
strategy over the rest of the history with what remains (`layout` has the rules for
each step). Below the threshold nothing is filtered, but the hard room is never passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contextq.assembly import layout
from contextq.assembly.citations import CitationMap
from contextq.assembly.counting import REPLY_PRIMING_TOKENS, frame_tokens, json_tokens
from contextq.assembly.pieces import Piece, text_piece
from contextq.assembly.plan import ContextPlan
from contextq.assembly.project import project_piece
from contextq.assembly.work import Work
from contextq.history.filtering import FilterResult, apply_filter
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
    preamble: list[Piece] = field(default_factory=list)  # the hierarchical memory block


def head_cost(parts: Parts, plan: ContextPlan) -> int:
    """Reply priming, S, and (Anthropic) the room for an opening turn and the breakpoints."""
    cost = REPLY_PRIMING_TOKENS + (parts.system.cost if parts.system else 0)
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
    history = work.total()
    stored = plan.read.filter.history_tokens
    if plan.read.window is not None and stored is not None:
        history = max(history, stored)
    summary = parts.summary.cost if parts.summary else 0
    whole = project_piece(plan.project, room=None, citations=CitationMap(), target=plan.target)
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
) -> tuple[layout.Fill, FilterResult | None]:
    """Which history messages go in, the parts cut to fit (see `layout`)."""
    f = plan.read.filter
    everything = set(range(len(work.history)))
    whole = project_piece(plan.project, room=None, citations=citations, target=plan.target)
    if not runs and total_before(work, parts, plan) <= limit:
        parts.project = whole
        return layout.Fill(everything, protected=everything), None
    pinned = layout.pinned_indices(work, int(f.arguments.get("max_pinned", 10))) - work.required
    alone = sum(work.cost(i) for i in pinned if work.history[i].role != "system")
    head = head_cost(parts, plan)
    if runs and alone > limit - head:
        parts.custom_agent = parts.reminder = parts.summary = None
        return layout.pinned_only(work, pinned, head=head, hard=f.budget.hard_limit_tokens), None
    fixed = fixed_cost(parts, plan)
    anchored = sum(work.cost(i) for i in pinned)
    warnings = layout.fit_turn(work, limit - fixed - anchored)
    taken = fixed + anchored + sum(work.cost(i) for i in work.required)
    taken += _summary_and_project(
        work, parts, plan, room=limit - taken, citations=citations, warnings=warnings
    )
    kept, result = _select(
        work,
        plan,
        parts,
        room=limit - taken + anchored,
        limit=limit,
        runs=runs,
        cut_seq=cut_seq,
        memory=memory,
    )
    protected = work.required | pinned
    outside = taken - anchored - sum(work.cost(i) for i in work.required)
    outside += sum(p.cost for p in parts.preamble)
    if result is not None and result.error is not None:  # fail-open: all, within the hard room
        limit = f.budget.hard_limit_tokens
        runs = False
    layout.fit_history(work, kept, protected, limit - outside)
    if not runs and len(kept) < len(work.history):
        warnings.append(_OVER_HARD_ROOM)
    warnings += result.warnings if result is not None else []
    minimum = int(f.arguments.get("min_messages_to_keep", 0))
    if len(kept) < min(minimum, len(work.history)):
        warnings.append(short_of_minimum(len(kept), minimum))
    return layout.Fill(kept, warnings, protected=protected, limit=limit), result


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
    parts.project = project_piece(plan.project, room=share, citations=citations, target=plan.target)
    return taken + (parts.project.cost if parts.project is not None else 0)


_OVER_HARD_ROOM = (
    "the context was over the model's hard room (context_limit - max_output_tokens - "
    "tool definitions) without filtering: the oldest history was left out"
)


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
) -> tuple[set[int], FilterResult | None]:
    """The strategy over the history but the turn's required messages, with `room`
    tokens (the pinned messages' included: strategies count them first)."""
    f = plan.read.filter
    rest = [i for i in range(len(work.history)) if i not in work.required]
    messages = layout.costed(work, rest)
    min_keep = int(f.arguments.get("min_messages_to_keep", 0)) - len(work.required)
    if not runs:  # only the hard room: the newest that fit, no trim, no cut
        selection = token_budget(
            messages,
            budget_tokens=room,
            min_messages_to_keep=max(0, min_keep),
            max_pinned=int(f.arguments.get("max_pinned", 10)),
        )
        return {rest[j] for j in selection.kept} | work.required, None
    trim = int(f.budget.budget_tokens * f.trim_to) - (limit - room)
    overrides: dict[str, Any] = {
        "budget_tokens": room,
        "trim_tokens": max(0, trim),
        "min_messages_to_keep": max(0, min_keep),
        "cut_seq": _usable_cut(cut_seq, messages, plan),
    }
    if "window_size" in f.arguments:  # the turn's own newest messages are in the window
        window = int(f.arguments["window_size"])
        inside = sum(1 for i in work.required if i >= len(work.history) - window)
        overrides["window_size"] = max(1, window - inside)
    result = apply_filter(messages, f, memory=memory, run=True, overrides=overrides)
    position = {id(m): rest[j] for j, m in enumerate(messages)}
    kept = {position[id(m)] for m in result.messages} | work.required
    parts.preamble = [text_piece(m.text(), "user", "summary", plan.target) for m in result.preamble]
    result.warnings = [w for w in result.warnings if not w.startswith("MIN_MESSAGES_TO_KEEP")]
    return kept, result


def _usable_cut(cut_seq: int | None, messages: Sequence[Message], plan: ContextPlan) -> int | None:
    """A stored cut point, unless a window read left out messages after it (then the
    history from it is over the budget anyway: cut anew)."""
    if cut_seq is None or plan.read.window is None:
        return cut_seq
    loaded = [m.seq for m in messages if not m.pinned and m.role != "system"]
    return cut_seq if loaded and loaded[0] <= cut_seq else None
