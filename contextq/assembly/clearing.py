"""The clearing line: old tool results cleared to stubs, with hysteresis
(docs/context.md#clearing-old-tool-results-with-hysteresis).

The line is a seq: tool results below it stand as one-line stubs naming their size and
workspace path. It is carried from answer to answer (stored per conversation and
model, beside the cut point), so the cleared part of the history stays byte-identical
from turn to turn and providers' prompt caches keep hitting:

- each answer applies the carried line, never above the `keep`-th newest tool result
  (the newest `keep_tool_results` stay whole, whatever the carried line says);
- the line moves only when the context with the carried line and cut point does not
  fit, or is over the threshold with a batch of results to clear (`select` decides),
  and then to the `keep`-th newest result at once: everything older is cleared in one
  move;
- between moves it stays put, and new results accumulate whole.

Protected messages (the newest turn, pinned messages and their chains) are never
cleared, nor results already shorter than a stub.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from contextq.assembly.pieces import message_piece
from contextq.assembly.tool_results import keep_line, result_path, result_size, stub, to_clear
from contextq.assembly.wire import Target
from contextq.assembly.work import Work
from contextq.calibration import split_counter
from contextq.history.types import Message
from contextq.lru import LRU


def applied_line(work: Work, carried: int | None, keep: int) -> int | None:
    """The line an answer applies: the carried one, kept below the `keep` newest tool
    results (None: nothing to clear)."""
    newest = keep_line(work.history, keep)
    if carried is None or newest is None:
        return None
    return min(carried, newest)


def moved_line(work: Work, keep: int) -> int | None:
    """Where the line goes when it moves: the `keep`-th newest tool result."""
    return keep_line(work.history, keep)


def clearable(work: Work, line: int | None, protected: Iterable[int]) -> list[int]:
    """The tool results below `line` not cleared yet (their indices)."""
    if line is None:
        return []
    done = set(work.cleared)
    return [
        i
        for i in to_clear(work.history, line=line, protected=protected)
        if str(work.history[i].id) not in done
    ]


def clear_below(work: Work, line: int | None, protected: Iterable[int]) -> list[int]:
    """Clear the tool results below `line` not cleared yet; returns their indices."""
    found = clearable(work, line, protected)
    for i in found:
        cleared = _stub_for(work, i)
        work.cleared.append(str(work.history[i].id))
        work.history[i] = cleared
        work.pieces.replace(i, cleared)
        work.named.add(i)
    return found


StubKey = tuple[str, int, str, str, str]
STUBS: LRU[StubKey, Message] = LRU(100_000)  # (message id, seq, target) → its stub


def _stub_for(work: Work, i: int) -> Message:
    """The stub of tool result i, its `token_count` what it costs as sent in this target
    (so strategies take it as it is). A stored message never changes, nor its stub: made
    once per process and target, shared between requests (never mutated)."""
    original = work.original(i)
    target = work.target
    key = (str(original.id), original.seq, target.format, target.encoding, target.provider)
    found = STUBS.get(key)
    if found is None:
        view = work.views.get(str(original.id))
        size = view.size_bytes if view is not None else result_size(original)
        path = view.path if view is not None else result_path(original)
        made = stub(original, tokens=original.token_count, size_bytes=size, path=path)
        found = replace(made, token_count=message_piece(made, _stored_meaning(target, made)).cost)
        STUBS.put(key, found)
    return found


def _stored_meaning(target: Target, stub_message: Message) -> Target:
    """The target whose count a stub's `token_count` holds: a stored count's meaning (the
    open encoding's count of its OpenAI JSON) where the pieces calibrate stored counts
    themselves (a format whose stored counts apply, a calibrated counter), else the
    target's own cost."""
    encoding, family = split_counter(target.encoding)
    if family is None or not target.wire.stored_count_applies(stub_message):
        return target
    return replace(target, encoding=encoding)
