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
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from contextq.catalog import resolve_model
from contextq.errors import ValidationFailed
from contextq.history.chains import unit_at
from contextq.history.formats import to_anthropic, to_openai
from contextq.history.strategies import DEFAULT_CONTEXT_THRESHOLD, filter_history
from contextq.history.tokens import REPLY_PRIMING_TOKENS, token_count
from contextq.history.types import Message
from contextq.settings import Settings
from contextq.tokens import count_tokens

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory

log = logging.getLogger("contextq.history")

Format = Literal["openai", "anthropic"]
SUMMARY_ROLE: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class CompactionView:
    """The newest finished compaction, as the context needs it."""

    summary: str
    through_seq: int
    id: str | None = None
    method: str = "summary"


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


def summary_message(compaction: CompactionView) -> Message:
    text = (
        "Summary of the earlier part of this conversation (older messages were compacted):\n"
        f"<conversation_summary>\n{compaction.summary}\n</conversation_summary>"
    )
    return Message(role=SUMMARY_ROLE, content=text, seq=compaction.through_seq)


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
    """Ready-to-send history for `model`: see the module docstring for the order.

    `messages`: the stored history in seq order with `token_count` set.
    `tools`: tool definitions sent with the request (their tokens come off the budget
    unless `options` sets `tool_definition_tokens`). `history_tokens`: the stored
    running total of `messages`, and `anchors`: indices in `messages` of its system
    and pinned messages, if the caller has them (both only used without a
    compaction; they spare the engine a pass over the whole history).
    Raises ValidationFailed for bad options / format; otherwise never fails: a
    strategy error sends the whole history (fail-open), logged and reported.
    """
    started = time.perf_counter()
    if format not in ("openai", "anthropic"):
        raise ValidationFailed("format must be openai or anthropic", field="format")
    limits = resolve_model(model, settings)
    head = [Message(role="system", content=system_prompt)] if system_prompt else []
    summary = [summary_message(compaction)] if compaction is not None else []
    if compaction is not None:
        history = visible_history(messages, compaction.through_seq)
        history_tokens = None
        anchors = None
    else:
        history = list(messages)
    fixed_tokens = sum(token_count(m, limits.model) for m in head + summary)
    options = dict(options or {})
    if tools and "tool_definition_tokens" not in options:
        serialised = json.dumps(list(tools), ensure_ascii=False, separators=(",", ":"))
        options["tool_definition_tokens"] = count_tokens(serialised, limits.encoding)
    result = filter_history(
        history,
        limits=limits,
        settings=settings,
        strategy=strategy,
        options=options or None,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        fixed_tokens=fixed_tokens,
        history_tokens=history_tokens,
        anchors=anchors,
        memory=memory,
    )
    kept = result.messages
    lead = 0  # the history's own leading system messages go with the system prompt
    while lead < len(kept) and kept[lead].role == "system":
        lead += 1
    final = head + kept[:lead] + summary + result.preamble + kept[lead:]
    system: str | None = None
    if format == "anthropic":
        system, out = to_anthropic(final)
    else:
        out = to_openai(final)
    total = fixed_tokens + result.kept_tokens + REPLY_PRIMING_TOKENS
    duration_ms = round((time.perf_counter() - started) * 1000, 3)
    report = ContextReport(
        conversation_id=conversation_id,
        model=limits.model or limits.catalog_id or "",
        provider=limits.provider,
        format=format,
        context_limit=limits.context_window,
        budget_tokens=result.budget.budget_tokens,
        token_count=total,
        strategy=result.strategy,
        filtered=result.filtered,
        compaction_id=compaction.id if compaction else None,
        original_message_count=len(messages),
        kept_message_count=result.kept_count,
        removed_message_ids=result.removed_ids,
        usage_before=result.usage_before,
        usage_after=result.usage_after,
        duration_ms=duration_ms,
        filter_duration_ms=result.duration_ms,
        error=result.error,
        warnings=result.warnings,
    )
    if result.filtered:
        log.info(
            "[ContextFilter] Filtered conversation %s: %d → %d messages using %s in %.1fms",
            conversation_id,
            result.original_count,
            result.kept_count,
            result.strategy,
            duration_ms,
        )
    return HistoryContext(out, system, report)
