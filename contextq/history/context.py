"""The history part of the ready-to-send context (SPEC §2, §6).

Order: system prompt (then the history's own leading system messages) → newest
compaction summary → (hierarchical memory block) → filtered history.

The compaction summary is sent as a **user** message, wrapped in
`<conversation_summary>` tags, not as a system message: it is made from user and
tool content, so it must not gain the authority of operator instructions (a prompt
injected into an old tool result would otherwise be promoted to a system
instruction); and a user turn fits both APIs unchanged (Anthropic has a single
system string and wants the first turn to be the user's). The hierarchical memory
block is sent the same way, for the same reasons.

Messages covered by the compaction (seq ≤ through_seq) are replaced by the summary,
except system and pinned messages and their tool chains, which stay verbatim.
Nothing here calls an LLM or waits on anything.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from contextq.history.chains import unit_at
from contextq.history.filtering import FilterResult, apply_filter
from contextq.history.formats import to_anthropic, to_openai
from contextq.history.message_tokens import REPLY_PRIMING_TOKENS
from contextq.history.options import DEFAULT_CONTEXT_THRESHOLD
from contextq.history.plan import CompactionView, Format, ReadPlan, plan_read
from contextq.history.types import Message
from contextq.settings import Settings

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory

log = logging.getLogger("contextq.history")


@dataclass(slots=True)
class ContextReport:
    """The facts of SPEC §2's context answer (everything but `messages`)."""

    conversation_id: str | None
    model: str
    provider: str
    format: Format
    context_limit: int
    budget_tokens: int
    token_count: int
    strategy: str
    filtered: bool
    compaction_id: str | None
    original_message_count: int
    kept_message_count: int
    removed_message_ids: list[str]
    usage_before: float
    usage_after: float
    duration_ms: float
    filter_duration_ms: float
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class HistoryContext:
    messages: list[dict[str, Any]]  # in the requested format
    system: str | None  # format=anthropic: the top-level system string
    report: ContextReport


def visible_history(messages: Sequence[Message], through_seq: int | None) -> list[Message]:
    """Messages not covered by a compaction: seq > through_seq, plus covered system and
    pinned messages with their tool chains. `messages` must be in seq order."""
    if through_seq is None:
        return list(messages)
    cut = bisect.bisect_right(messages, through_seq, key=lambda m: m.seq)
    keep: set[int] = set()
    for j in range(cut):
        message = messages[j]
        if message.pinned or message.role == "system":
            unit = unit_at(messages, j)
            keep.update(i for i in unit.members if i < cut)
    return [messages[j] for j in sorted(keep)] + list(messages[cut:])


def assemble_history(
    messages: Sequence[Message],
    plan: ReadPlan,
    *,
    conversation_id: str | None = None,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
) -> HistoryContext:
    """Ready-to-send history: `messages` (what `plan.load` said to read, in seq order,
    with `token_count` set) filtered and laid out as the module docstring says.

    `anchors`: indices in `messages` of its system and pinned messages, if the caller
    has them (used without a compaction; they spare a pass over the history).
    Never fails: a strategy error sends every message given (fail-open), logged and
    reported in `report.error`.
    """
    started = time.perf_counter()
    compaction = plan.compaction
    if compaction is not None:
        history = visible_history(messages, compaction.through_seq)
        anchors = None
    else:
        history = list(messages)
    result = apply_filter(history, plan.filter, anchors=anchors, memory=memory)
    kept = result.messages
    lead = 0  # the history's own leading system messages go with the system prompt
    while lead < len(kept) and kept[lead].role == "system":
        lead += 1
    final = [*plan.head, *kept[:lead], *plan.summary, *result.preamble, *kept[lead:]]
    system: str | None = None
    if plan.format == "anthropic":
        system, out = to_anthropic(final)
    else:
        out = to_openai(final)
    report = _report(plan, result, len(messages), conversation_id, started)
    if result.filtered:
        log.info(
            "[ContextFilter] Filtered conversation %s: %d → %d messages using %s in %.1fms",
            conversation_id,
            result.original_count,
            result.kept_count,
            result.strategy,
            report.duration_ms,
        )
    return HistoryContext(out, system, report)


def _report(
    plan: ReadPlan,
    result: FilterResult,
    given: int,
    conversation_id: str | None,
    started: float,
) -> ContextReport:
    limits = plan.filter.limits
    return ContextReport(
        conversation_id=conversation_id,
        model=limits.model or limits.catalog_id or "",
        provider=limits.provider,
        format=plan.format,
        context_limit=limits.context_window,
        budget_tokens=result.budget.budget_tokens,
        token_count=plan.filter.fixed_tokens + result.kept_tokens + REPLY_PRIMING_TOKENS,
        strategy=result.strategy,
        filtered=result.filtered,
        compaction_id=plan.compaction.id if plan.compaction else None,
        original_message_count=given,
        kept_message_count=result.kept_count,
        removed_message_ids=result.removed_ids,
        usage_before=result.usage_before,
        usage_after=result.usage_after,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        filter_duration_ms=result.duration_ms,
        error=result.error,
        warnings=result.warnings,
    )


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
    context_threshold: float = DEFAULT_CONTEXT_THRESHOLD,
    force_filter: bool = False,
    skip_filter: bool = False,
    format: Format = "openai",
    tools: Sequence[Mapping[str, Any]] | None = None,
    memory: HierarchicalMemory | None = None,
    history_tokens: int | None = None,
    anchors: Sequence[int] | None = None,
) -> HistoryContext:
    """`plan_read` then `assemble_history`, for a caller holding the whole history.

    `messages`: the stored history in seq order with `token_count` set;
    `history_tokens`: their stored running total, if the caller has it. The other
    arguments are `plan_read`'s. Raises ValidationFailed for bad options / format.
    """
    plan = plan_read(
        settings=settings,
        model=model,
        system_prompt=system_prompt,
        compaction=compaction,
        history_tokens=history_tokens,
        strategy=strategy,
        options=options,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        format=format,
        tools=tools,
    )
    return assemble_history(
        messages, plan, conversation_id=conversation_id, anchors=anchors, memory=memory
    )
