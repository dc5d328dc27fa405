"""The newest turn within its room (docs/context.md#the-newest-turn): its user message with its
files, and its newest unit (a message, or a tool call with its results).

When the turn does not fit the room it has next to S, R, CA and the pinned messages:

1. its files go in as many as fit, in the order attached (each left out noted with
   the room it did not fit: a `failed_file_ids` entry), never all-or-nothing;
2. when its messages alone do not fit, its non-pinned messages shrink to previews —
   the newest tool result first, then the others largest first — each to the largest
   preview that fits (`shrink`), a tool result always keeping the line naming its
   workspace path; a pinned message never shrinks (it keeps its protection when it
   is also the newest turn's user message);
3. should even the smallest previews not fit next to the pinned messages, the turn's
   non-pinned messages are left out, named in a warning, and the files of a pinned
   user message go in as many as fit the room they leave (step 1 again).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from contextq.assembly.shrink import results_first, shrink_in_order
from contextq.assembly.work import Work, attach_files, includable


@dataclass(slots=True)
class TurnFit:
    warnings: list[str] = field(default_factory=list)
    left_out: set[int] = field(default_factory=set)  # turn messages not sent at all


def files_left_out(room_name: str) -> str:
    return (
        f"it does not fit {room_name} next to the newest turn's messages and the files "
        "attached before it: left out"
    )


def fit_turn(work: Work, room: int, *, pinned: set[int], room_name: str) -> TurnFit:
    """Make the newest turn fit `room` (module docstring). `room_name` says what the
    room is (the budget or the model's room), for notes and warnings."""
    turn = sorted(work.required)
    out = TurnFit()
    u = work.u
    files = includable(work, u) if u is not None else []
    if u is not None and files:
        attach_files(work, u, work.history[u].file_ids)
        if work.costs(turn) <= room:
            return out
        if _files_that_fit(work, u, files, turn=turn, room=room, room_name=room_name):
            return out
        out.warnings.append(f"the newest message's files do not fit {room_name}: left out, listed")
    elif work.costs(turn) <= room:
        return out
    shrunk = _previews(work, turn, room, pinned=pinned, room_name=room_name, out=out)
    if files and u is not None and u not in shrunk and work.costs(turn) <= room:
        # next to the previews: as many of the files as fit what the previews left
        _files_that_fit(work, u, files, turn=turn, room=room, room_name=room_name)
    if work.costs(turn) > room:
        _leave_out_messages(work, turn, pinned=pinned, room_name=room_name, out=out)
        if files and u is not None and u not in out.left_out:
            # the room the messages left: as many of the files as fit next to the pinned
            kept = [i for i in turn if i not in out.left_out]
            _files_that_fit(work, u, files, turn=kept, room=room, room_name=room_name)
    return out


def _leave_out_messages(
    work: Work, turn: list[int], *, pinned: set[int], room_name: str, out: TurnFit
) -> None:
    """Leave the turn's non-pinned messages out, named in a warning."""
    out.left_out = {i for i in turn if i not in pinned}
    ids = [str(work.history[i].id) for i in sorted(out.left_out)]
    out.warnings.append(
        f"the newest turn does not fit {room_name} next to the pinned messages, even as "
        f"previews: its messages {ids} are left out"
    )


# What one file's cost alone may exceed its share of a list of several by (the documents
# message's frame and `{"documents": [` are counted once for the list): a file whose
# cost alone is over the room by more than this cannot fit with the others either
SHARED_TOKENS = 32


def fit_pinned_user_files(work: Work, room: int, *, room_name: str) -> list[str]:
    """The pinned newest user message's files when only the pinned messages are sent
    (the pinned-alone case of docs/context.md#pinned-messages): as many as fit `room` (what the hard
    room leaves next
    to S and the pinned messages), in the order attached, each left out noted (nothing
    attached is dropped silently). Returns the warning when some are left out."""
    u = work.u
    files = includable(work, u) if u is not None else []
    if u is None or not files:
        return []
    attach_files(work, u, work.history[u].file_ids)
    if work.cost(u) <= room:
        return []
    fit_files(work, u, files, turn=[u], room=room, room_name=room_name)
    return [f"the newest message's files do not fit {room_name}: left out, listed"]


def fit_files(
    work: Work, u: int, files: list[str], *, turn: list[int], room: int, room_name: str
) -> None:
    """Message u with as many of its `files` as fit `room` next to the rest of `turn`,
    in the order attached; none (each noted) when not even `turn` without them fits."""
    _files_that_fit(work, u, files, turn=turn, room=room, room_name=room_name)


def _files_that_fit(
    work: Work, u: int, files: list[str], *, turn: list[int], room: int, room_name: str
) -> bool:
    """Message u with as many of its `files` as fit `room` next to the rest of the turn,
    in the order attached: each file goes in when the turn with it and those taken
    before it fits, by its count as sent (the documents of one message are one text: a
    calibrated count takes the largest factor among them). False when not even the turn
    without them fits (then none)."""
    fixed = [f for f in work.history[u].file_ids if f not in set(files)]  # notes only
    note = files_left_out(room_name)
    attach_files(work, u, fixed, left_out=note)
    base = work.costs(turn)
    if base > room:
        return False
    bare = work.cost(u)
    costs: dict[str, int] = {}
    for file_id in files:  # each file's cost alone (a list of several costs about the sum)
        attach_files(work, u, [*fixed, file_id], left_out=note)
        costs[file_id] = work.cost(u) - bare
    chosen = _by_cost(costs, base, room)
    attach_files(work, u, [*fixed, *chosen], left_out=note)
    used = work.costs(turn)
    if used > room:  # together they count more than alone: one by one, measured
        chosen, used = [], base
    for file_id in files:
        if file_id in chosen or used + costs[file_id] - SHARED_TOKENS > room:
            continue
        attach_files(work, u, _in_order(files, fixed, [*chosen, file_id]), left_out=note)
        total = work.costs(turn)
        if total <= room:
            chosen, used = [*chosen, file_id], total
    attach_files(work, u, _in_order(files, fixed, chosen), left_out=note)
    return True


def _by_cost(costs: dict[str, int], base: int, room: int) -> list[str]:
    """The files, in order, whose costs alone add up within `room`."""
    chosen: list[str] = []
    used = base
    for file_id, cost in costs.items():
        if used + cost <= room:
            chosen.append(file_id)
            used += cost
    return chosen


def _in_order(files: list[str], fixed: list[str], chosen: list[str]) -> list[str]:
    return [*fixed, *(f for f in files if f in set(chosen))]


def _previews(
    work: Work, turn: list[int], room: int, *, pinned: set[int], room_name: str, out: TurnFit
) -> set[int]:
    """Shrink the turn's non-pinned messages, newest tool result first, until it fits;
    returns the ones shrunk."""
    order = results_first(work, (i for i in turn if i not in pinned))
    shrunk = shrink_in_order(work, order, work.costs(turn) - room)
    out.warnings += [preview_warning(work, i, before, room_name) for i, before in shrunk]
    return {i for i, _ in shrunk}


def preview_warning(work: Work, i: int, whole: int, room_name: str) -> str:
    """The warning naming message i of the newest turn, `whole` tokens, as a preview."""
    return (
        f"message {work.history[i].id} ({whole} tokens) is shown as a preview of "
        f"{work.cost(i)} tokens: the newest turn does not fit {room_name} whole"
    )
