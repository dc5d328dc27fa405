"""Previews of messages too large for the room they have
(docs/history.md#a-summary-for-a-smaller-model, docs/workspaces.md#large-tool-results).

A preview keeps the head and tail of a text with a note saying how many tokens were cut
from the middle, and always says where the whole is:

- a tool result: the line naming its workspace path and size (a large result's stand-in
  line, `tool_results.stand_in`), never cut; only the body before it shrinks, down to
  nothing (then the line alone);
- any other message: a note naming the message id (the whole message is in the
  conversation's history, `GET …/messages`).

`fit_preview` finds the largest body whose rendered piece costs at most a target (the
count is the honest one of the piece as sent, not an estimate), so a preview is never
"a few tokens over" and never smaller than what fits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from contextq.tokens import get_encoding

P = TypeVar("P")

HEAD_SHARE = 0.6
NOTE_TOKENS = 40  # preview_text: room kept for the note line
MAX_TRIES = 10  # renders while looking for the largest body that fits (stops sooner once found)


def cut_middle(text: str, keep: int, encoding: str, *, whole: str = "") -> str:
    """`text` with all but `keep` of its tokens cut from the middle (head 60 %, tail 40 %)
    and a note saying how many; the text itself when it has no more than `keep`; "" when
    `keep` is 0 (a note that everything was cut says nothing). `whole`: where the whole
    text is, added to the note."""
    enc = get_encoding(encoding)
    tokens = enc.encode_ordinary(text)
    total = len(tokens)
    if total <= keep:
        return text
    if keep <= 0:
        return ""
    head_n = max(1, int(keep * HEAD_SHARE))
    tail_n = keep - head_n
    head = enc.decode(tokens[:head_n])
    tail = enc.decode(tokens[total - tail_n :]) if tail_n else ""
    where = f"; {whole}" if whole else ""
    note = f"\n[… {total - keep} of {total} tokens cut from the middle{where} …]\n"
    return head + note + tail


def preview_text(text: str, max_tokens: int, encoding: str) -> tuple[str, int, int]:
    """`text` within about `max_tokens` tokens (head and tail with a note). Returns (text,
    tokens of the original, tokens kept)."""
    total = len(get_encoding(encoding).encode_ordinary(text))
    if total <= max_tokens:
        return text, total, total
    keep = max(1, max_tokens - NOTE_TOKENS)
    return cut_middle(text, keep, encoding), total, keep


@dataclass(frozen=True, slots=True)
class Fitted(Generic[P]):
    """The largest preview found within the target, with the body tokens it keeps."""

    value: P
    cost: int
    body: int


def fit_preview(
    build: Callable[[int], P], cost: Callable[[P], int], *, body_total: int, target: int
) -> Fitted[P]:
    """The preview `build(b)` with the most body tokens `b` (0…`body_total`) whose
    `cost` is at most `target`; the bare preview (`b` = 0) when even that is over.

    Each try is placed on the line through the largest body known to fit and the
    smallest known not to (one token of cost a body token until one is over): a
    calibrated count costs a body token more than one, and a cut can change the kind a
    text is counted as, so the cost may jump; a try that did not halve the bracket is
    followed by its middle, so that a jump is narrowed down within the tries."""
    bare = build(0)
    best = Fitted(bare, cost(bare), 0)
    if best.cost >= target or body_total <= 0:
        return best
    b = min(body_total, target - best.cost)
    low, high = 0, body_total + 1  # low fits; high (or more) does not
    low_cost, high_cost = best.cost, None
    halve = False
    for _ in range(MAX_TRIES):
        if not low < b < high:
            break
        width = high - low
        value = build(b)
        c = cost(value)
        if c <= target:
            best, low, low_cost = Fitted(value, c, b), b, c
        else:
            high, high_cost = b, c
        if halve or high_cost is None:
            b = (low + high) // 2 if halve else min(high - 1, b + max(1, target - c))
        else:
            slope = max(1.0, (high_cost - low_cost) / (high - low))
            b = min(high - 1, max(low + 1, low + int((target - low_cost) / slope)))
        halve = high_cost is not None and not halve and 2 * (high - low) > width
    return best
