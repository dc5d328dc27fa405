"""The history part of the ready-to-send context (SPEC §2, §6).

The context itself is assembled by `contextq.assembly` (files, prompts, reminders and
history in one budget); this module keeps what is the history's own:

- `visible_history`: the messages a compaction does not cover. Messages covered by the
  newest compaction (seq ≤ through_seq) are replaced by its summary, except system and
  pinned messages and their tool chains, which stay verbatim (and the newest user
  message, which is the newest turn's).
- `build_history_context`: a history alone (no files, no prompt layers or sections)
  assembled by the same engine, for callers that hold a whole history (benchmarks,
  tests of the strategies end to end).

The compaction summary is sent as a **user** message, wrapped in
`<conversation_summary>` tags, not as a system message: it is made from user and
tool content, so it must not gain the authority of operator instructions (a prompt
injected into an old tool result would otherwise be promoted to a system
instruction); and a user turn fits both APIs unchanged (Anthropic has a single
system string and wants the first turn to be the user's). The hierarchical memory
block is sent the same way, for the same reasons.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from contextq.history.chains import unit_at
from contextq.history.plan import CompactionView, Format
from contextq.history.types import Message
from contextq.settings import Settings

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory


@dataclass(slots=True)
class HistoryContext:
    """A context answer: `messages` in the requested format, the Anthropic `system`
    blocks, and the rest of the answer (`report`: token_count, removed_message_ids, …)."""

    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None
    report: dict[str, Any] = field(default_factory=dict)


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


def build_history_context(
    messages: Sequence[Message],
    *,
    settings: Settings,
    conversation_id: str | None = None,
    model: str | None = None,
    system_prompt: str | None = None,
    compaction: CompactionView | None = None,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    context_threshold: float | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    format: Format = "openai",
    tools: Sequence[Mapping[str, Any]] | None = None,
    memory: HierarchicalMemory | None = None,
    history_tokens: int | None = None,
    cut_seq: int | None = None,
) -> HistoryContext:
    """A history assembled alone: `system_prompt` as given (no default prompt, no dated
    sections), no files, no reminders. `messages`: the stored history in seq order with
    `token_count` set; `history_tokens`: their stored running total, if the caller has
    it. Raises ValidationFailed for bad options / format."""
    from contextq.assembly import Prompts, assemble_context, plan_context

    plan = plan_context(
        settings=settings,
        now=datetime.now(UTC),
        prompts=Prompts(system_prompt=system_prompt, use_default=False, sections=False),
        model=model,
        stored_model=model,
        tools=tools,
        compaction=compaction,
        history_tokens=history_tokens,
        strategy=strategy,
        options=options,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        format=format,
        conversation_id=conversation_id,
    )
    assembled = assemble_context(
        messages, plan, cut_seq=cut_seq, memory=memory, conversation_id=conversation_id
    )
    answer = dict(assembled.answer)
    out = answer.pop("messages")
    system = answer.pop("system", None)
    answer["cut_seq"] = assembled.cut_seq
    return HistoryContext(out, system, answer)
