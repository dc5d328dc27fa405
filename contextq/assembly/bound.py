"""Bound reasoning in the assembly (docs/context.md#bound-reasoning): the turn's pins as parts
(the date line and citation section of S as the turn first sent them, each reminder
where it was first sent), and the ordered pieces asked of the binding rule
(`contextq.assembly.binding`, the one module that decides)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from contextq.assembly import binding
from contextq.assembly.binding import BindState, Decision, Pins, Slot
from contextq.assembly.pieces import text_piece
from contextq.assembly.plan import ContextPlan
from contextq.assembly.prompts import reminder_text
from contextq.assembly.wire import Piece
from contextq.assembly.work import Work
from contextq.history.native import reasoning_units


@dataclass(slots=True)
class Bound:
    """A read for a target that binds its reasoning."""

    state: BindState  # carried in
    pins: Pins  # this answer's
    in_loop: bool  # a later read of a turn already answered: the answer only grows
    decision: Decision | None = None


def start(work: Work, plan: ContextPlan, state: BindState | None, searched: bool) -> Bound | None:
    """The bound read's pins, and the reasoning watermark applied to the pieces (None:
    the target does not bind its reasoning)."""
    if not binding.applies(plan.target):
        return None
    state = state or BindState()
    history = work.history
    turn_seq = history[work.u].seq if work.u is not None else 0
    last = history[-1] if history else None
    ended = last is not None and last.role == "assistant" and not last.tool_calls
    pins, in_loop = binding.pins_for(
        state,
        turn_seq=turn_seq,
        now=plan.now.isoformat(),
        searched=searched,
        reminder=reminder_text(plan.prompts, search_ran=searched),
        last_seq=last.seq if last is not None else 0,
        ended=ended,
    )
    return Bound(state, pins, in_loop)


def apply_watermark(work: Work, bound: Bound) -> None:
    """Leave out the reasoning of every row at or below the watermark: never sent again
    (applied once the context before filtering is measured, so that `usage_before` is
    the same whichever read first left them out)."""
    watermark = bound.state.watermark
    if watermark is None:
        return
    native = work.target.wire.native
    work.withhold(
        i
        for i, m in enumerate(work.history)
        if m.seq <= watermark
        and m.native is not None
        and m.native.format == native
        and reasoning_units(m.native)
    )


def pinned_now(bound: Bound) -> datetime:
    return datetime.fromisoformat(bound.pins.now)


def reminder_pieces(bound: Bound, plan: ContextPlan) -> list[tuple[int, Piece]]:
    """Each pinned reminder as a piece, with the seq it is sent after."""
    return [
        (seq, text_piece(text, "user", "reminders", plan.target))
        for seq, text in bound.pins.reminders
    ]


def decide(
    bound: Bound,
    work: Work,
    pieces: Sequence[Piece],
    indices: Sequence[int | None],
    *,
    plan: ContextPlan,
    cut_seq: int | None,
) -> bool:
    """Ask the binding rule about the ordered pieces (`indices`: the history index each
    renders); leave out the reasoning it withholds. Whether the pieces changed (order
    them again)."""
    wire = plan.target.wire
    tools: list[Any] = list(plan.tools_out)
    decision = binding.decide(
        [
            Slot(p, i, plain=i is not None and i not in work.attached and not p.shown)
            for p, i in zip(pieces, indices, strict=True)
        ],
        tools=tools,
        target=plan.target,
        state=bound.state,
        lifted=[wire.lifts(p) for p in pieces],
        cut_seq=cut_seq,
        pins=bound.pins,
        newest_seq=work.history[-1].seq if work.history else None,
    )
    bound.decision = decision
    return work.withhold(decision.withheld)


def warning(bound: Bound, plan: ContextPlan, *, cut_moved: bool, line_moved: bool) -> str | None:
    """The warning of the reasoning this read left out, naming why (None: none); a read
    of the same history again (another process's concurrent read among them) says it
    again, from the state."""
    decision = bound.decision
    if decision is None:
        return None
    if not decision.newly:
        said = bound.state.notice
        return said[1] if said is not None and said[0] == decision.last_seq else None
    head = binding.newest_head(bound.state, plan.target.format)
    reason = binding.cause(
        cut_moved=cut_moved,
        line_moved=line_moved,
        head_changed=head is not None and head != decision.head,
        new_turn=not bound.in_loop,
    )
    text = binding.warning(reason, decision.newly)
    if decision.last_seq is not None:
        decision.state = replace(decision.state, notice=(decision.last_seq, text))
    return text


DEFERRED = "inside a tool loop on a model that binds its reasoning, the cut point waits"


def deferred_warning(tokens: int, budget: int) -> str:
    """An answer over the budget (within the model's room) because a bound loop's cut
    point and clearing line wait for the next user turn."""
    return (
        f"{DEFERRED} for the next user turn: this answer is {tokens - budget:,} tokens "
        "over the budget (within the model's room), so that the model's thinking stays valid"
    )
