"""Tool-call chains: an assistant message with `tool_calls` and its matching `tool` results.

A chain is kept or dropped as one *unit*. Units are found locally around an index
(never by scanning the whole history), so a walk from the newest message backwards
costs what it keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextq.history.types import Message


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages `start..end` (inclusive) that stay or go together.

    `members` are the indices that may be sent; `orphans` are tool results in the
    span with no matching call (an API would refuse them), never sent by a filter.
    """

    start: int
    end: int
    members: tuple[int, ...]
    orphans: tuple[int, ...] = ()


def is_call(message: Message) -> bool:
    return message.role == "assistant" and bool(message.tool_calls)


def unit_at(messages: Sequence[Message], index: int) -> Unit:
    """The unit containing `messages[index]`: O(size of its chain)."""
    message = messages[index]
    if message.role != "tool" and not is_call(message):
        return Unit(index, index, (index,))
    start = index
    if message.role == "tool":
        while start > 0 and messages[start - 1].role == "tool":
            start -= 1
        if start > 0 and is_call(messages[start - 1]):
            start -= 1
    end = start
    while end + 1 < len(messages) and messages[end + 1].role == "tool":
        end += 1
    head = messages[start]
    if not is_call(head):  # a run of tool results with no call before it
        span = tuple(range(start, end + 1))
        return Unit(start, end, (), span)
    call_ids = set(head.call_ids)
    members = [start]
    orphans: list[int] = []
    for i in range(start + 1, end + 1):
        (members if messages[i].tool_call_id in call_ids else orphans).append(i)
    return Unit(start, end, tuple(members), tuple(orphans))
