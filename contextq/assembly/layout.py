"""What goes in: one budget for everything, filled in SPEC §6's order.

Taken first: S, R, CA, the newest turn with its files (its user message and its newest
unit; the tool chains in between are the newest history), pinned messages with their
chains, the summary. Then the project's documents up to `project_share` of what is
left. Then the history newest first (the strategy), each user message with its files.

Edge cases (SPEC §4, §5):
- the pinned messages alone over the budget: only they (with S) are sent, with a
  warning; those that do not fit the hard room are left out from the oldest, named;
- the newest turn over its room: its files are left out first (listed: "does not fit"),
  then its largest messages become previews (head and tail, with a note);
- a summary over what is left is cut to fit (`fit_summary`: memory-backed sections
  first, the narrative last, with a note);
- below the threshold nothing is filtered, but the hard room is never exceeded: the
  oldest history is left out, with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from contextq.assembly.pieces import Piece, message_piece, text_piece
from contextq.assembly.preview import preview_message
from contextq.assembly.work import Work, without_files
from contextq.history.chains import unit_at
from contextq.history.plan import summary_wrapper
from contextq.history.retention import fit_summary
from contextq.history.strategies import find_anchors
from contextq.history.types import Message
from contextq.tokens import count_tokens

log = logging.getLogger("contextq.history")

MIN_PREVIEW_TOKENS = 200  # a preview never shrinks a message below this
MIN_SUMMARY_TOKENS = 64  # below: the summary is left out rather than cut to nothing
SUMMARY_WRAPPER_TOKENS = 40  # the tags and the sentence around a summary
TURN_FILES_DO_NOT_FIT = "does not fit the model's context window next to this turn"


@dataclass(slots=True)
class Fill:
    """What the history contributes: indices of `Work.history` sent, and the reasons."""

    kept: set[int]
    warnings: list[str] = field(default_factory=list)
    pinned_only: bool = False
    protected: set[int] = field(default_factory=set)  # never left out to fit (turn, pinned)
    limit: int | None = None  # what the final count must fit (None: the caller's)


def pinned_indices(work: Work, max_pinned: int) -> set[int]:
    """The pinned messages kept (the newest `max_pinned`) with their chains, and the
    history's own system messages."""
    keep: set[int] = set()
    left = max_pinned
    for i in reversed(find_anchors(work.history)):
        message = work.history[i]
        if message.role != "system":
            if not message.pinned or left <= 0:
                continue
            left -= 1
        keep.update(unit_at(work.history, i).members or (i,))
    return keep


def pinned_only(work: Work, pinned: set[int], *, head: int, hard: int) -> Fill:
    """Only the pinned messages (with S and the history's system messages); those that do
    not fit the hard room are left out from the oldest, named in the warning."""
    history = work.history
    kept = set(pinned)
    total = head + sum(work.cost(i) for i in kept)
    dropped: list[str] = []
    for i in sorted(pinned):
        if total <= hard:
            break
        if history[i].role == "system" or i not in kept:
            continue
        for j in unit_at(history, i).members or (i,):
            if j in kept:
                kept.discard(j)
                total -= work.cost(j)
                dropped.append(str(history[j].id))
    warning = (
        "the pinned messages alone exceed budget_tokens: only they and the system prompt are sent"
    )
    if dropped:
        warning += f"; pinned messages left out to stay within the model's room: {dropped}"
    log.warning("%s", warning)
    return Fill(kept, [warning], pinned_only=True, protected=set(kept), limit=hard)


def fit_turn(work: Work, room: int) -> list[str]:
    """Make the newest turn (its user message with files, and its newest unit) fit `room`:
    its files out first, then previews of its largest messages. Returns warnings."""
    required = sorted(work.required)
    if sum(work.cost(i) for i in required) <= room:
        return []
    warnings: list[str] = []
    u = work.u
    if u is not None and (u in work.docs or work.pieces[u].file_tokens):
        without_files(work, u, TURN_FILES_DO_NOT_FIT)
        warnings.append("the newest message's files do not fit the budget: left out, listed")
    previewed: set[int] = set()
    while (excess := sum(work.cost(i) for i in required) - room) > 0:
        candidates = [i for i in required if i not in previewed]
        if not candidates:
            warnings.append("the newest turn does not fit the budget even as previews")
            break
        i = max(candidates, key=work.cost)
        current = work.cost(i)
        target = max(MIN_PREVIEW_TOKENS, current - excess)
        previewed.add(i)
        if target >= current:
            continue
        _preview(work, i, target)
        warnings.append(
            f"message {work.history[i].id} ({current} tokens) is shown as a preview of "
            f"{work.cost(i)} tokens: it does not fit the model's context window whole"
        )
    return warnings


def _preview(work: Work, i: int, target: int) -> None:
    """Replace message i by a preview costing about `target` tokens."""
    original = work.history[i]
    piece = work.pieces[i]
    text_tokens = count_tokens(original.text(), work.target.encoding)
    around = max(0, work.cost(i) - text_tokens)  # frame, ids, calls, files
    shown = preview_message(original, max(1, target - around), work.target.encoding)
    new_piece = message_piece(shown, work.target, work.attached.get(i))
    new_piece.message = original
    work.pieces[i] = new_piece
    if new_piece.cost > piece.cost:  # never worse than the original
        work.pieces[i] = piece


def fit_summary_piece(
    summary: Piece, text: str, room: int, work: Work
) -> tuple[Piece | None, str | None]:
    """The summary piece cut to `room` tokens (None when even a cut one does not fit)."""
    if summary.cost <= room:
        return summary, None
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


def costed(work: Work, indices: list[int]) -> list[Message]:
    """The messages at `indices` with `token_count` set to what they cost as sent."""
    return [replace(work.history[i], token_count=work.cost(i)) for i in indices]
