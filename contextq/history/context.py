"""The history part of the ready-to-send context (docs/history.md#the-answer,
docs/history.md#the-ready-to-send-context): `visible_history`, the messages a compaction does not
cover.

The context itself is assembled by `contextq.assembly` (files, prompts, reminders and
history in one budget), which builds on this package; the history package never imports
the assembly (a history assembled alone, for a caller holding it whole, is
`contextq.assembly.build_history_context`).

Messages covered by the newest compaction (seq ≤ through_seq) are replaced by its
summary, except system and pinned messages and their tool chains, which stay verbatim
(and the newest user message, which is the newest turn's). The compaction summary is
sent as a **user** message, wrapped in `<conversation_summary>` tags, not as a system
message: it is made from user and tool content, so it must not gain the authority of
operator instructions (a prompt injected into an old tool result would otherwise be
promoted to a system instruction); and a user turn fits both APIs unchanged (Anthropic
has a single system string and wants the first turn to be the user's). The hierarchical
memory block is sent the same way, for the same reasons.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from contextq.history.chains import unit_at
from contextq.history.types import Message


def visible_history(
    messages: Sequence[Message], through_seq: int | None, keep_seqs: Sequence[int] = ()
) -> list[Message]:
    """Messages not covered by a compaction: seq > through_seq, plus covered system and
    pinned messages with their tool chains, and covered messages whose seq is in
    `keep_seqs` (with their chains). `messages` must be in seq order."""
    if through_seq is None:
        return list(messages)
    cut = bisect.bisect_right(messages, through_seq, key=lambda m: m.seq)
    keep: set[int] = set()
    wanted = set(keep_seqs)
    for j in range(cut):
        message = messages[j]
        if message.pinned or message.role == "system" or message.seq in wanted:
            unit = unit_at(messages, j)
            keep.update(i for i in (unit.members or (j,)) if i < cut)
    return [messages[j] for j in sorted(keep)] + list(messages[cut:])
