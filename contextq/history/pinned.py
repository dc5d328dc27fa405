"""Which pinned messages are protected: the newest `max_pinned` with their tool chains.

One rule for every caller (the strategies' anchors, the assembly's pinned set, the
compaction's verbatim messages): system messages always, and of the pinned ones the
newest `max_pinned` (`MAX_PINNED_MESSAGES`, carried by the filter plan), each with the
unit (`contextq.history.chains`) it belongs to. Each caller takes what it needs of a
unit: the members it may send, or the whole span.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from contextq.history.chains import Unit, unit_at
from contextq.history.types import Message


def find_anchors(messages: Sequence[Message]) -> list[int]:
    """Indices of system and pinned messages (one pass; the service may pass its own)."""
    return [i for i, m in enumerate(messages) if m.pinned or m.role == "system"]


def protected_anchors(
    messages: Sequence[Message], max_pinned: int, anchors: Sequence[int] | None = None
) -> Iterator[tuple[int, Unit]]:
    """The system messages and the newest `max_pinned` pinned messages, newest first,
    each as (its index, its unit). `anchors`: the indices of the system and pinned
    messages, ascending, when the caller has them (else found in one pass)."""
    if anchors is None:
        anchors = find_anchors(messages)
    left = max_pinned
    for i in reversed(anchors):  # the newest pinned messages win
        message = messages[i]
        if message.role != "system":
            if not message.pinned or left <= 0:
                continue
            left -= 1
        yield i, unit_at(messages, i)
