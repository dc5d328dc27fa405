"""What goes in: one budget for everything, filled in the order of
docs/context.md#what-is-taken-first (`fill`), and the
rules of its edge cases (docs/context.md#pinned-messages,
docs/history.md#a-summary-for-a-smaller-model):

- pinned messages that do not fit the model's hard room are cut from the oldest, one
  unit at a time with their files and tool chains, until the rest fit, each named in a
  warning (`cut_pinned`); never all of them;
- the pinned messages alone over the budget: only they (with S) are sent, with the
  seed-002 warning, logged and in the answer (`pinned_only`) — the one case where
  `token_count` may pass `budget_tokens`;
- the newest turn over its room: `turn_fit`;
- a summary over what is left is cut to fit (`fit_summary`: memory-backed sections
  first, the narrative last, with a note);
- below the threshold nothing is filtered, but the hard room is never exceeded: the
  oldest history is left out, with a warning (`fit_history`).
"""

from __future__ import annotations

import logging
from collections.abc import Set
from dataclasses import dataclass, field

from contextq.assembly.pieces import text_piece
from contextq.assembly.shrink import results_first, shrink_in_order
from contextq.assembly.turn_fit import fit_files, preview_warning
from contextq.assembly.wire import Piece
from contextq.assembly.work import Work, includable
from contextq.history.chains import unit_at
from contextq.history.pinned import protected_anchors
from contextq.history.plan import summary_wrapper
from contextq.history.retention import fit_summary

log = logging.getLogger("contextq.history")

MIN_SUMMARY_TOKENS = 64  # below: the summary is left out rather than cut to nothing
SUMMARY_WRAPPER_TOKENS = 40  # the tags and the sentence around a summary
PINNED_ALONE = (
    "the pinned messages alone exceed budget_tokens: only they and the system prompt are sent"
)


@dataclass(slots=True)
class Fill:
    """What the history contributes: indices of `Work.history` sent, and the reasons."""

    kept: set[int]
    warnings: list[str] = field(default_factory=list)
    pinned_only: bool = False
    protected: set[int] = field(default_factory=set)  # never left out to fit (turn, pinned)
    limit: int | None = None  # what the final count must fit (None: the caller's)
    # what may still shrink should the count as sent pass the limit (`shrink_loose`): the
    # newest turn's non-pinned messages, or (pinned alone) the pinned ones already previews
    loose: list[int] = field(default_factory=list)
    room_name: str = "the model's room"  # what `limit` is, for warnings


def pinned_indices(work: Work, max_pinned: int) -> set[int]:
    """The pinned messages kept (the newest `max_pinned`) with their chains, and the
    history's own system messages (`contextq.history.pinned`)."""
    keep: set[int] = set()
    for i, unit in protected_anchors(work.history, max_pinned):
        keep.update(unit.members or (i,))
    return keep


def _pinned_units(work: Work, pinned: set[int]) -> list[list[int]]:
    """The pinned units (a pinned message with its chain), oldest first."""
    units: list[list[int]] = []
    seen: set[int] = set()
    for i in sorted(pinned):
        if i in seen or not work.history[i].pinned or work.history[i].role == "system":
            # the history's system messages go with S: never cut (docs/context.md#pinned-messages)
            continue
        members = [j for j in (unit_at(work.history, i).members or (i,)) if j in pinned]
        seen.update(members)
        units.append(members)
    return units


@dataclass(frozen=True, slots=True)
class PinnedCut:
    """What `cut_pinned` decided: the pinned messages (with their chains) that stay, the
    ones cut from the oldest, and the warning naming the cut (None: nothing was cut)."""

    kept: frozenset[int]
    cut: frozenset[int]
    warning: str | None = None


def cut_pinned(
    work: Work, pinned: Set[int], room: int, room_name: str = "the model's room"
) -> PinnedCut:
    """Cut the pinned messages that do not fit `room` (the hard room less S) from the
    oldest, one unit at a time with its files and tool chain, until the rest fit. Never
    cut: the newest pinned unit, and a pinned message of the newest turn (its user
    message, its newest unit: taken first, docs/context.md#what-is-taken-first). Should those alone
    not fit, the newest pinned unit's files go in as many as fit (the others noted as left out,
    `room_name` naming the room), then their messages shrink to previews, non-pinned
    ones first (the newest tool result first). `pinned` is left as given: the decision
    is the value returned (the warning also logged)."""
    kept = set(pinned)
    total = work.costs(kept)
    cut: set[int] = set()
    units = _pinned_units(work, kept)
    for members in units[:-1]:
        if total <= room:
            break
        if work.required.intersection(members):
            continue
        for j in members:
            kept.discard(j)
            cut.add(j)
            total -= work.cost(j)
    if total > room and units:  # what stays: its files as many as fit, then previews
        total = _newest_pinned_files(work, kept, units[-1], room, room_name)
    if total > room:
        _previews(work, kept, total - room)
    if not cut:
        return PinnedCut(frozenset(kept), frozenset())
    names = [str(work.history[j].id) for j in sorted(cut) if work.history[j].pinned]
    warning = (
        "the pinned messages do not fit the model's room (context_limit - max_output_tokens"
        " - tool definitions): the oldest were left out with their files and tool calls: "
        f"{names}"
    )
    log.warning("%s", warning)
    return PinnedCut(frozenset(kept), frozenset(cut), warning)


def give_way(work: Work, fill: Fill, excess: int, *, hard: bool) -> bool:
    """When the count as sent passes the limit by `excess` with no unprotected history
    left to leave out, what gives way, in the order the fill takes them the other way
    round: the newest turn's files (`refit_turn_files`), then its loose messages
    (`shrink_loose`), then, when the limit is the hard room, the oldest pinned units
    (`cut_pinned_late`), then the newest turn's loose messages left out
    (`leave_out_loose`), then, for the hard room, the previews of the newest pinned unit
    (`shrink_pinned_late`).
    Whether anything gave way."""
    if refit_turn_files(work, fill, excess) or shrink_loose(work, fill, excess):
        return True
    if hard and cut_pinned_late(work, fill, excess):
        return True
    if leave_out_loose(work, fill):
        return True
    return hard and shrink_pinned_late(work, fill, excess)


def leave_out_loose(work: Work, fill: Fill) -> bool:
    """The newest turn's loose messages left out, when even their smallest previews
    passed the limit next to the pinned messages once rendered (the fill's last step,
    `turn_fit`: its room was sized before the list's head and the breakpoints were
    placed). Named in a warning, in place of their preview warnings. Whether any was."""
    out = [i for i in fill.loose if i in fill.kept]
    if not out or fill.pinned_only:
        return False
    fill.kept.difference_update(out)
    fill.loose = []
    heads = tuple(f"message {work.history[i].id} (" for i in out)
    fill.warnings = [w for w in fill.warnings if not w.startswith(heads)]
    ids = [str(work.history[i].id) for i in sorted(out)]
    fill.warnings.append(
        f"the newest turn does not fit {fill.room_name} next to the pinned messages, even "
        f"as previews: its messages {ids} are left out"
    )
    return True


def refit_turn_files(work: Work, fill: Fill, excess: int) -> bool:
    """The newest user message's files fitted again, as many as fit, `excess` tokens
    fewer, when the count as sent still passes the limit with nothing else to leave
    out: what was sized before them can grow after the fill (the list ending on an older
    loop sends its reasoning too: `Work.sent_loop`). The files give way before the
    turn's messages shrink, as in `turn_fit`. Whether any was left out (noted)."""
    u = work.u
    if u is None or u not in fill.kept or u not in work.attached:
        return False
    files = includable(work, u)
    before = work.shown_files.get(u)
    if not files or before is None or not set(files).intersection(before[:-1]):
        return False
    turn = sorted(work.required & fill.kept)
    room = work.costs(turn) - excess
    fit_files(work, u, files, turn=turn, room=room, room_name=fill.room_name)
    if work.shown_files.get(u) == before:
        return False
    warning = f"the newest message's files do not fit {fill.room_name}: left out, listed"
    if warning not in fill.warnings:
        fill.warnings.append(warning)
    return True


def cut_pinned_late(work: Work, fill: Fill, excess: int) -> bool:
    """The oldest pinned units of `fill.kept` left out until `excess` tokens are gone,
    when the count as sent still passes the hard room with nothing else to leave out or
    shrink: what the pinned messages cost as sent can grow after `cut_pinned` sized them
    (the list ending on an older loop sends its reasoning too: `Work.sent_loop`). Never
    cut, as in `cut_pinned`: the newest pinned unit and the newest turn's. Whether any
    was cut (named in a warning)."""
    kept = fill.kept
    units = _pinned_units(work, kept & fill.protected)
    cut: list[int] = []
    for members in units[:-1]:
        if excess <= 0:
            break
        if work.required.intersection(members):
            continue
        for j in unit_at(work.history, members[0]).members or tuple(members):
            if j in kept:
                excess -= work.cost(j)
                kept.discard(j)
                cut.append(j)
    names = [str(work.history[j].id) for j in sorted(cut) if work.history[j].pinned]
    if not names:
        return bool(cut)
    _regrow_turn_files(work, fill, -excess)
    warning = (
        "the pinned messages do not fit the model's room (context_limit - max_output_tokens"
        " - tool definitions) with the reasoning of the loop the list ends on: the oldest "
        f"were left out with their files and tool calls: {names}"
    )
    log.warning("%s", warning)
    fill.warnings.append(warning)
    return True


def shrink_pinned_late(work: Work, fill: Fill, excess: int) -> bool:
    """The pinned units kept shrunk by `excess` tokens, when the count as sent still
    passes the hard room with no older pinned unit left to cut (`cut_pinned_late`): their
    non-pinned chain members (the newest tool result first), then the pinned messages
    already shown as previews (largest first; one sent whole fits the room and is never
    shrunk, docs/context.md#pinned-messages). What they cost as sent grew after
    `cut_pinned` sized them (the list ending on their loop sends its reasoning:
    `Work.sent_loop`). Whether any shrank."""
    history = work.history
    units = _pinned_units(work, fill.kept & fill.protected)
    members = {j for unit in units for j in unit if history[j].role != "system"}
    loose = sorted((i for i in members if not history[i].pinned), reverse=True)
    loose.sort(key=lambda i: history[i].role != "tool")
    previews = [i for i in members if history[i].pinned and work.cost(i) < _whole_cost(work, i)]
    previews.sort(key=work.cost, reverse=True)
    return bool(shrink_in_order(work, loose + previews, excess))


def _regrow_turn_files(work: Work, fill: Fill, freed: int) -> None:
    """The newest user message's files fitted again into the `freed` tokens a late cut
    of a whole pinned unit left over (`refit_turn_files` may have left them out before
    the cut): as many as fit, in order, before any older turn's
    (docs/context.md#the-newest-turn)."""
    u = work.u
    if freed <= 0 or u is None or u not in fill.kept or u not in work.attached:
        return
    files = includable(work, u)
    if files:
        turn = sorted((work.required | {u}) & fill.kept)
        room = work.costs(turn) + freed
        fit_files(work, u, files, turn=turn, room=room, room_name=fill.room_name)
        if set(files) <= set(work.shown_files.get(u, ())[:-1]):  # all back: not left out
            said = "the newest message's files do not fit "
            fill.warnings = [w for w in fill.warnings if not w.startswith(said)]


def _newest_pinned_files(
    work: Work, pinned: set[int], unit: list[int], room: int, room_name: str
) -> int:
    """The newest pinned unit's files, as many as fit `room` next to the other pinned
    messages (each left out noted); returns the pinned messages' cost after."""
    for i in unit:
        files = includable(work, i) if work.history[i].role == "user" else []
        if files:
            rest = work.costs(pinned) - work.costs(unit)
            fit_files(work, i, files, turn=unit, room=room - rest, room_name=room_name)
    return work.costs(pinned)


def _previews(work: Work, pinned: set[int], excess: int) -> None:
    """Shrink the pinned messages' non-pinned chain members (newest tool result first),
    then the pinned ones (largest first), until `excess` tokens are gone."""
    history = work.history
    loose = sorted((i for i in pinned if not history[i].pinned), reverse=True)
    loose.sort(key=lambda i: history[i].role != "tool")
    held = sorted((i for i in pinned if history[i].pinned), key=work.cost, reverse=True)
    shrink_in_order(work, [i for i in loose + held if history[i].role != "system"], excess)


def shrink_loose(work: Work, fill: Fill, excess: int) -> bool:
    """`fill.loose` shrunk by `excess` tokens (the newest tool result first, then the
    others largest first), when the count as sent passed the limit with nothing else
    left to leave out; whether any shrank. The fill sizes them before the cache
    breakpoints are placed: a breakpoint is counted with its block, whose calibrated
    factor it may change, so its cost is known only once rendered. Each message of the
    newest turn shrunk is named in a warning with its new size."""
    shrunk = shrink_in_order(work, results_first(work, fill.loose), excess)
    for i, _ in shrunk:
        _said_preview(work, fill, i)
    return bool(shrunk)


def _whole_cost(work: Work, i: int) -> int:
    """What message i costs whole (not as a preview), its documents included."""
    docs = work.docs.get(i)
    whole = work.piece_of(i, work.history[i]).cost
    return whole + (docs.cost if docs is not None else 0)


def _said_preview(work: Work, fill: Fill, i: int) -> None:
    """The warning naming message i of the newest turn as a preview, in place of any
    said before (a pinned message's preview has none: `cut_pinned`)."""
    if fill.pinned_only:
        return
    head = f"message {work.history[i].id} ("
    fill.warnings = [w for w in fill.warnings if not w.startswith(head)]
    fill.warnings.append(preview_warning(work, i, _whole_cost(work, i), fill.room_name))


def pinned_only(work: Work, pinned: set[int], *, limit: int, warnings: list[str]) -> Fill:
    """Only the pinned messages (with S and the history's system messages): they alone
    exceed the budget (seed 002), logged and in the answer. Those shown as previews
    (`cut_pinned`) may shrink further (`shrink_loose`)."""
    log.warning("%s", PINNED_ALONE)
    history = work.history
    previews = [
        i
        for i in sorted(pinned)
        if history[i].role != "system" and work.cost(i) < _whole_cost(work, i)
    ]
    return Fill(
        set(pinned), [*warnings, PINNED_ALONE], pinned_only=True, protected=set(pinned),
        limit=limit, loose=previews,
    )  # fmt: skip


SUMMARY_STEP = 0.75  # a cut summary's size is the limit times a power of this


def summary_room(room: int, limit: int) -> int:
    """The size a summary is cut to within `room`: the largest `limit` x 0.75^k that
    fits it, so that the cut summary (its bytes and its note) stays the same while the
    room moves with each turn's size (docs/context.md#the-cut-point-and-a-prefix-that-stays-put: the
    summary is part of the prefix that
    stays put between cuts), at the price of up to a quarter of the room."""
    if room < MIN_SUMMARY_TOKENS + SUMMARY_WRAPPER_TOKENS:
        return room
    step = float(max(limit, room))
    while step > room:
        step *= SUMMARY_STEP
    return int(step)


def fit_summary_piece(
    summary: Piece, text: str, room: int, work: Work, *, limit: int | None = None
) -> tuple[Piece | None, str | None]:
    """The summary piece cut to `room` tokens (None when even a cut one does not fit);
    with `limit` (the room's whole limit), cut to the stable size `summary_room`."""
    if summary.cost <= room:
        return summary, None
    if limit is not None:
        room = summary_room(room, limit)
    if room < MIN_SUMMARY_TOKENS + SUMMARY_WRAPPER_TOKENS:
        return None, "the compaction summary does not fit the budget: left out"
    encoding = work.target.encoding
    limit = room - SUMMARY_WRAPPER_TOKENS
    piece = summary
    for _ in range(4):  # the wrapper's cost is estimated: tighten if it was short
        cut = fit_summary(text, limit, encoding)
        piece = text_piece(summary_wrapper(cut), "user", "summary", work.target)
        if piece.cost <= room:
            break
        limit -= piece.cost - room + 8
    if piece.cost > room:
        return None, "the compaction summary does not fit the budget: left out"
    warning = (
        f"the compaction summary ({summary.cost} tokens) was cut to {piece.cost} tokens "
        "to fit this model"
    )
    return piece, warning


def fit_history(work: Work, kept: set[int], protected: set[int], room: int) -> bool:
    """Leave out the oldest unprotected units of `kept` until their cost fits `room`;
    whether anything was left out."""
    total = sum(work.cost(i) for i in kept)
    dropped = False
    for i in sorted(kept):
        if total <= room:
            break
        if i in protected or i not in kept:
            continue
        for j in unit_at(work.history, i).members or (i,):
            if j in kept and j not in protected:
                kept.discard(j)
                total -= work.cost(j)
                dropped = True
    return dropped
