"""The newest turn within its room (SPEC §6 "Budget"): its user message with its files,
and its newest unit (a message, or a tool call with its results).

When the turn does not fit the room it has next to S, R, CA and the pinned messages:

1. its files go in as many as fit, in the order attached (each left out noted with
   the room it did not fit: a `failed_file_ids` entry), never all-or-nothing;
2. when its messages alone do not fit, its non-pinned messages shrink to previews —
   the newest tool result first, then the others largest first — each to the largest
   preview that fits (`shrink`), a tool result always keeping the line naming its
   workspace path; a pinned message never shrinks (it keeps its protection when it
   is also the newest turn's user message);
3. should even the smallest previews not fit next to the pinned messages, the turn's
   non-pinned messages are left out, named in a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from contextq.assembly.shrink import shrink
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
    _previews(work, turn, room, pinned=pinned, room_name=room_name, out=out)
    if work.costs(turn) > room:
        out.left_out = {i for i in turn if i not in pinned}
        ids = [str(work.history[i].id) for i in sorted(out.left_out)]
        out.warnings.append(
            f"the newest turn does not fit {room_name} next to the pinned messages, even as "
            f"previews: its messages {ids} are left out"
        )
    return out


def _files_that_fit(
    work: Work, u: int, files: list[str], *, turn: list[int], room: int, room_name: str
) -> bool:
    """Message u with as many of its `files` as fit `room` next to the rest of the turn,
    in the order attached; False when not even the turn without them fits (then none)."""
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
    chosen: list[str] = []
    used = base
    for file_id in files:
        if used + costs[file_id] <= room:
            chosen.append(file_id)
            used += costs[file_id]
    while True:
        attach_files(work, u, [*fixed, *chosen], left_out=note)
        if work.costs(turn) <= room or not chosen:
            return True
        chosen.pop()


def _previews(
    work: Work, turn: list[int], room: int, *, pinned: set[int], room_name: str, out: TurnFit
) -> None:
    """Shrink the turn's non-pinned messages, newest tool result first, until it fits."""
    history = work.history
    results = [i for i in reversed(turn) if history[i].role == "tool" and i not in pinned]
    others = [i for i in turn if history[i].role != "tool" and i not in pinned]
    for i in results + sorted(others, key=work.cost, reverse=True):
        excess = work.costs(turn) - room
        if excess <= 0:
            return
        before = work.cost(i)
        if shrink(work, i, before - excess):
            out.warnings.append(
                f"message {history[i].id} ({before} tokens) is shown as a preview of "
                f"{work.cost(i)} tokens: the newest turn does not fit {room_name} whole"
            )
