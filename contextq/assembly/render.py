"""The final list from ordered pieces, its honest count and where the tokens went.

Each wire format renders its own list (`contextq.assembly.formats`: OpenAI one message
per piece; Anthropic merges consecutive turns, lifts system pieces into `system` and
marks the cache breakpoints; …). What every render shares is here: the answer's wire
fields with the count, and the breakdown by category.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextq.assembly.inputs import CATEGORIES, Category
from contextq.assembly.wire import Piece, Rendered, Target


def render(pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
    """`pieces` in order; `turn_start`: index of the first piece of the newest turn
    (len(pieces) when there is none)."""
    return target.wire.render(pieces, turn_start=turn_start, target=target)


def empty_breakdown() -> dict[str, int]:
    return dict.fromkeys(CATEGORIES, 0)


def charge(breakdown: dict[str, int], piece: Piece) -> None:
    """A piece's tokens to its category; its files' and reasoning's to theirs."""
    charge_tokens(breakdown, piece.category, piece.tokens, piece.file_tokens)
    if piece.reasoning_tokens:
        breakdown[piece.category] -= piece.reasoning_tokens
        breakdown["reasoning"] += piece.reasoning_tokens


REASONS = ("other_vendor", "earlier_turns", "prefix_changed")


def reasoning_dropped(pieces: Sequence[Piece]) -> dict[str, int]:
    """The reasoning units (blocks, items, parts) of the messages sent that were left
    out, by reason (docs/context.md#bound-reasoning; `prefix_changed` is the binding rule's)."""
    dropped = dict.fromkeys(REASONS, 0)
    for piece in pieces:
        if piece.reasoning_left is not None:
            reason, units = piece.reasoning_left
            dropped[reason] += units
    return dropped


def charge_tokens(
    breakdown: dict[str, int], category: Category, tokens: int, files: int = 0
) -> None:
    breakdown[category] += tokens - files
    breakdown["files"] += files
