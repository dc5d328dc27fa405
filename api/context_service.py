"""The context route's work: load what can be kept, let the engine assemble it.

What is read:
- the conversation row (running totals: tokens, last seq, newest compaction's seq);
- the newest compaction (its summary stands in for the messages it covers);
- messages, selecting only the columns the engine needs:
  - with a compaction: those after it, plus covered system/pinned messages with
    their tool chains (the compaction task keeps that tail bounded);
  - without one, when `token_budget` or `sliding_window` is going to filter (usage
    over the threshold, or forced), only a window: the newest messages holding
    `hard limit` tokens, found through the `cum_tokens` index, plus a margin for tool
    chains, plus earlier system/pinned messages with their chains. The ids of the
    earlier messages are read (ids only) for `removed_message_ids`. Cost grows with
    what can be kept, not with the history length;
  - otherwise everything (it is all sent anyway).

The engine (`contextq.history.build_history_context`) does the rest. This function
never calls an LLM and never waits on a task.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from contextq.catalog import resolve_model
from contextq.history import (
    CompactionView,
    HierarchicalMemory,
    build_history_context,
    compute_budget,
    resolve_strategy,
    validate_options,
)
from contextq.history.strategies import (
    DEFAULT_BUDGET_PERCENTAGE,
    DEFAULT_CONTEXT_THRESHOLD,
    DEFAULT_RESERVE_TOKENS,
    DEFAULT_STRATEGY,
    DEFAULT_WINDOW_SIZE,
)
from contextq.settings import Settings
from contextq.tokens import count_tokens
from store import history_queries as q
from store.history_tables import Conversation, Message

log = logging.getLogger("contextq.api.context")

CHAIN_MARGIN = 64  # extra messages read before a window so a tool chain at its edge is whole


def build_context(
    session: Session,
    *,
    conversation: Conversation,
    settings: Settings,
    model: str | None = None,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    output_format: str = "openai",
    tools_used: list[str] | None = None,
) -> dict[str, Any]:
    """SPEC §2's context answer as a dict (raises ValidationFailed for bad options)."""
    started = time.perf_counter()
    model = model or conversation.model
    requested = strategy if strategy is not None else conversation.context_strategy
    name = resolve_strategy(requested)
    if options is None and strategy is None:
        options = conversation.context_options  # the conversation's own choice
    if name == (requested or DEFAULT_STRATEGY):
        options = validate_options(name, options, field="options")
    threshold = conversation.context_threshold or DEFAULT_CONTEXT_THRESHOLD

    compaction_row = (
        q.newest_compaction(session, conversation_id=conversation.id)
        if conversation.last_compacted_seq
        else None
    )
    compaction = (
        CompactionView(
            summary=compaction_row.summary,
            through_seq=compaction_row.through_seq,
            id=compaction_row.id,
            method=compaction_row.method,
        )
        if compaction_row is not None
        else None
    )
    window_start = None
    if compaction is None:
        window_start = _window_start(
            session,
            conversation=conversation,
            settings=settings,
            model=model,
            name=name,
            options=options or {},
            threshold=threshold,
            force_filter=force_filter,
            skip_filter=skip_filter,
        )
    memory = None
    if name == "hierarchical":
        memory = HierarchicalMemory.from_dict(
            q.get_memory_state(session, conversation_id=conversation.id)
        )

    def run(
        start: int | None, strategy_name: str | None, opts: Mapping[str, Any] | None
    ) -> tuple[Any, list[str]]:
        prefix_removed: list[str] = []
        if compaction is not None:
            loaded = q.load_context_messages(
                session, conversation=conversation, through_seq=compaction.through_seq
            )
            messages = loaded.messages
        elif start is not None:
            messages, prefix_removed = _load_window(session, conversation=conversation, start=start)
        else:
            messages = q.load_context_messages(session, conversation=conversation).messages
        context = build_history_context(
            messages,
            settings=settings,
            conversation_id=conversation.id,
            model=model,
            system_prompt=conversation.system_prompt,
            compaction=compaction,
            strategy=strategy_name,
            options=opts,
            context_threshold=threshold,
            force_filter=force_filter,
            skip_filter=skip_filter,
            format=output_format,  # type: ignore[arg-type]
            tools=conversation.tools,
            memory=memory,
            history_tokens=conversation.total_tokens if compaction is None else None,
        )
        return context, prefix_removed

    context, prefix_removed = run(window_start, requested, options)
    if context.report.error is not None and window_start is not None:
        # fail-open means the whole history, not the window: read it all and send it
        error = context.report.error
        context, prefix_removed = run(None, "noop", None)
        context.report.error = error
    report = context.report
    answer = report.to_dict()
    answer["removed_message_ids"] = prefix_removed + report.removed_message_ids
    answer["original_message_count"] = conversation.message_count
    answer["original_tokens"] = conversation.total_tokens
    answer["pending_file_ids"] = []
    answer["failed_file_ids"] = []
    answer["tools_used"] = list(tools_used or [])
    answer["messages"] = context.messages
    if output_format == "anthropic":
        answer["system"] = context.system
    answer["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)  # reads included
    return answer


def _window_start(
    session: Session,
    *,
    conversation: Conversation,
    settings: Settings,
    model: str | None,
    name: str,
    options: Mapping[str, Any],
    threshold: float,
    force_filter: bool,
    skip_filter: bool,
) -> int | None:
    """The first seq worth reading when the strategy will filter, else None (read all)."""
    if skip_filter or name not in ("token_budget", "sliding_window"):
        return None
    limits = resolve_model(model, settings)
    fixed = count_tokens(conversation.system_prompt or "", limits.encoding)
    usage = (fixed + conversation.total_tokens) / max(1, limits.context_window)
    if not (force_filter or (settings.ENABLE_AUTO_COMPRESSION and usage >= threshold)):
        return None
    if name == "sliding_window":
        keep = int(options.get("window_size", DEFAULT_WINDOW_SIZE))
        start = conversation.last_seq - keep - CHAIN_MARGIN
    else:
        budget = compute_budget(
            context_limit=limits.context_window,
            model_max_output=limits.max_output_tokens,
            max_output_tokens=options.get("max_output_tokens"),
            tool_definition_tokens=0,  # tools only shrink the room: reading more is safe
            budget_percentage=options.get("budget_percentage", DEFAULT_BUDGET_PERCENTAGE),
            reserve_tokens=options.get("reserve_tokens", DEFAULT_RESERVE_TOKENS),
        )
        # the strategy keeps the newest units within the budget, and the newest
        # `min_messages_to_keep` messages even past it (up to the hard limit)
        cut = conversation.total_tokens - budget.budget_tokens
        if cut <= 0:
            return None
        first = session.execute(
            select(func.min(Message.seq)).where(
                Message.conversation_id == conversation.id, Message.cum_tokens > cut
            )
        ).scalar_one()
        if first is None:
            return None
        keep = int(options.get("min_messages_to_keep", settings.MIN_MESSAGES_TO_KEEP))
        first = min(int(first), conversation.last_seq - keep)
        start = int(first) - CHAIN_MARGIN
    return start if start > 1 else None


def _load_window(
    session: Session, *, conversation: Conversation, start: int
) -> tuple[list[Any], list[str]]:
    """Messages from seq `start` on, plus earlier system/pinned ones with their chains;
    and the ids of the earlier messages not read (they are removed by the filter)."""
    loaded = q.load_context_messages(
        session, conversation=conversation, through_seq=start - 1, with_removed=True
    )
    return loaded.messages, loaded.removed_before
