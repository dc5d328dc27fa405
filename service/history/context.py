"""The ready-to-send context (SPEC §2 "Ready-to-send context"): load → assemble → report.

1. The engine plans the read from the conversation row's stored totals
   (`contextq.history.plan_read`): strategy, options, budget, trigger, what to load.
2. This module loads what the plan says, selecting only the columns the engine needs
   (`store.message_cache`): everything; the messages after the newest compaction with
   the covered system/pinned ones and their chains; or only a window of the newest
   messages of a long history (found through the `cum_tokens` index), plus earlier
   system/pinned ones with their chains and the ids of the rest (they are removed).
3. The engine assembles the context with the same plan (`assemble_history`).
4. The answer adds what only the stored rows know (the original totals).

It never calls an LLM and never waits on a task.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from contextq.history import (
    CompactionView,
    HierarchicalMemory,
    HistoryContext,
    Message,
    ReadPlan,
    assemble_history,
    plan_read,
)
from contextq.settings import Settings
from service import events
from service.history.conversations import owned_conversation
from service.history.memory import load_memory
from store import history_queries as q
from store.history_tables import Conversation
from store.message_cache import load_context_messages


@dataclass(slots=True)
class Loaded:
    """What a context read loaded: messages in seq order and what it knows about them."""

    messages: list[Message]
    anchors: list[int] | None = None  # indices of system/pinned messages (no compaction)
    removed_before: list[str] = field(default_factory=list)  # ids before a window


def build_context(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    model: str | None = None,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    output_format: str = "openai",
    tools_used: list[str] | None = None,
) -> dict[str, Any]:
    """SPEC §2's context answer as a dict (ValidationFailed for bad options or format)."""
    started = time.perf_counter()
    conversation = owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    plan = plan_read(
        settings=settings,
        model=model or conversation.model,
        system_prompt=conversation.system_prompt,
        compaction=_newest_compaction(session, conversation),
        history_tokens=conversation.total_tokens,
        strategy=strategy,
        options=options,
        default_strategy=conversation.context_strategy,
        default_options=conversation.context_options,
        context_threshold=conversation.context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        format=output_format,
        tools=conversation.tools,
    )
    memory = None
    if plan.filter.strategy == "hierarchical":
        memory = load_memory(session, conversation_id=conversation.id)
    loaded = _load(session, conversation, plan)
    context = _assemble(conversation, plan, loaded, memory)
    if context.report.error is not None and plan.window is not None:
        # fail-open means the whole history, not the window: read it all and send it
        error = context.report.error
        plan = plan.fail_open()
        loaded = _load(session, conversation, plan)
        context = _assemble(conversation, plan, loaded, memory)
        context.report.error = error
    answer = _answer(conversation, context, loaded, tools_used)
    answer["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)  # reads included
    events.context_built(
        settings=settings,
        owner_id=owner_id,
        answer=answer,
        requested=strategy if strategy is not None else conversation.context_strategy,
    )
    return answer


def _newest_compaction(session: Session, conversation: Conversation) -> CompactionView | None:
    if not conversation.last_compacted_seq:
        return None
    row = q.newest_compaction(session, conversation_id=conversation.id)
    if row is None:
        return None
    return CompactionView(
        summary=row.summary, through_seq=row.through_seq, id=row.id, method=row.method
    )


def _load(session: Session, conversation: Conversation, plan: ReadPlan) -> Loaded:
    """The messages `plan.load` asks for."""
    if plan.compaction is not None:
        through = plan.compaction.through_seq
        after = load_context_messages(session, conversation=conversation, through_seq=through)
        return Loaded(after.messages)
    start = None
    window = plan.window
    if window is not None:
        first_past = None
        if window.past_tokens is not None:
            first_past = q.first_seq_past(
                session, conversation_id=conversation.id, tokens=window.past_tokens
            )
        start = window.start(last_seq=conversation.last_seq, first_seq_past=first_past)
    if start is None:
        everything = load_context_messages(session, conversation=conversation)
        return Loaded(everything.messages, everything.anchors)
    window_read = load_context_messages(
        session, conversation=conversation, through_seq=start - 1, with_removed=True
    )
    return Loaded(window_read.messages, window_read.anchors, window_read.removed_before)


def _assemble(
    conversation: Conversation,
    plan: ReadPlan,
    loaded: Loaded,
    memory: HierarchicalMemory | None,
) -> HistoryContext:
    return assemble_history(
        loaded.messages,
        plan,
        conversation_id=conversation.id,
        anchors=loaded.anchors,
        memory=memory,
    )


def _answer(
    conversation: Conversation,
    context: HistoryContext,
    loaded: Loaded,
    tools_used: list[str] | None,
) -> dict[str, Any]:
    """The report with what only the stored rows know, and the messages."""
    answer = context.report.to_dict()
    answer["removed_message_ids"] = loaded.removed_before + answer["removed_message_ids"]
    answer["original_message_count"] = conversation.message_count
    answer["original_tokens"] = conversation.total_tokens
    answer["pending_file_ids"] = []
    answer["failed_file_ids"] = []
    answer["tools_used"] = list(tools_used or [])
    answer["messages"] = context.messages
    if context.report.format == "anthropic":
        answer["system"] = context.system
    return answer
