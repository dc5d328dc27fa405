"""The ready-to-send context (docs/history.md#the-ready-to-send-context): load → assemble →
report, and store what the answer fixed.

1. The engine plans the read from the conversation row (`contextq.assembly.plan_context`:
   prompts, tools, strategy, options, budget, trigger, what to load).
2. This module loads what the plan says (`store.message_cache`: everything; the messages
   after the newest compaction with the covered system/pinned ones and the newest user
   message; or a window of the newest messages of a long history), the files the loaded
   messages name (`context_files`), the owner's saved system prompt, the citation ids
   of those files and the state carried for the model (the cut point and the clearing
   line). A window read starts at the carried cut point, so the kept history is read
   whole however cheap its cleared tool results made it.
3. The engine assembles the context (`contextq.assembly.assemble_context`).
4. New citation ids and a moved cut point or clearing line are stored in one short write
   transaction of their own, only when there are any. The carried state is written only
   if it is still the version this read started from (`context_queries.put_carried`, a
   compare-and-set); should another request have moved it, or given the same documents
   ids, first, the context is assembled again with what that request stored, so
   concurrent reads answer the same. A read that moves nothing writes nothing and takes
   no lock.
5. Tool results the answer names by workspace path (stubs, previews) that are not in
   the workspace yet are written there before the answer is returned
   (`context_tool_results.ensure_written`), so every path it names answers 200.

The project slot is `context_project`; the previews of large tool results
`context_tool_results`.

It never calls an LLM and never waits on a task.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlmodel import Session

from contextq import builtin_tools
from contextq.assembly import (
    DEFAULT_SEARCH_TOOLS,
    Assembled,
    Carry,
    CitationMap,
    ContextPlan,
    Prompts,
    assemble_context,
    file_key,
    newest_user_seq,
    plan_context,
    reminder_texts,
)
from contextq.assembly.binding import BindState
from contextq.assembly.binding import applies as binding_applies
from contextq.history import CompactionView, HierarchicalMemory, Message
from contextq.history.plan import ReadPlan
from contextq.settings import Settings
from service import events
from service.history import context_project, context_tool_results
from service.history.context_files import load_file_views
from service.history.memory import load_memory
from service.workspaces.locate import owned_conversation
from store import context_queries as cq
from store import history_queries as q
from store.db import session_scope
from store.history_tables import Conversation
from store.message_cache import load_context_messages


@dataclass(slots=True)
class Loaded:
    """What a context read loaded: messages in seq order and what it knows about them."""

    messages: list[Message]
    removed_before: list[str] = field(default_factory=list)  # ids before a window


class _Raced(Exception):
    """Another request stored citation ids for these documents, or moved the carried
    state, first."""


@dataclass(frozen=True, slots=True)
class Request:
    """A request's parameters (docs/history.md#the-answer GET …/context)."""

    model: str | None = None
    strategy: str | None = None
    options: Mapping[str, Any] | None = None
    force_filter: bool = False
    skip_filter: bool = False
    output_format: str = "openai"
    tools_used: Sequence[str] | None = None
    tools: Sequence[Any] | None = None
    query: str | None = None
    datetime_granularity: str | None = None
    # docs/workspaces.md#following-a-stub: add contextq's own tools' definitions
    builtin_tools: bool = False


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
    tools_used: Sequence[str] | None = None,
    tools: Sequence[Any] | None = None,
    query: str | None = None,
    datetime_granularity: str | None = None,
    builtin_tools: bool = False,
) -> dict[str, Any]:
    """The context answer (docs/history.md#the-answer) as a dict (ValidationFailed for bad options,
    format or tools; NotFound for another owner's conversation). `tools_used` None: the turn's tool
    calls tell whether a search tool ran. `query` is the retrieval query of the project
    slot (else the newest user message). `builtin_tools`: the definitions of
    `contextq.builtin_tools.CONTEXT_TOOLS` join the tools (docs/workspaces.md#following-a-stub)."""
    started = time.perf_counter()
    request = Request(
        model,
        strategy,
        options,
        force_filter,
        skip_filter,
        output_format,
        tools_used,
        tools,
        query,
        datetime_granularity,
        builtin_tools,
    )
    conversation = owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    loaded, assembled = _assemble_and_store(session, settings, conversation, owner_id, request)
    answer = assembled.answer
    answer["warnings"] += context_tool_results.ensure_written(
        session,
        settings,
        owner_id=owner_id,
        conversation_id=conversation.id,
        messages=loaded.messages,
        named_ids=assembled.named,
    )
    answer["removed_message_ids"] = loaded.removed_before + answer["removed_message_ids"]
    answer["original_message_count"] = conversation.message_count
    answer["original_tokens"] = conversation.total_tokens
    answer["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)  # reads included
    events.context_built(
        settings=settings,
        owner_id=owner_id,
        answer=answer,
        requested=strategy if strategy is not None else conversation.context_strategy,
    )
    return answer


def _assemble_and_store(
    session: Session,
    settings: Settings,
    conversation: Conversation,
    owner_id: str,
    request: Request,
) -> tuple[Loaded, Assembled]:
    """Plan, assemble, and store the carried state and citation ids; when another
    request stored first, read again with what it stored (up to three times: the second
    read moves nothing over the same history) so both answers agree."""
    for _attempt in range(3):
        plan = _plan(session, settings, conversation, owner_id, request)
        loaded, assembled, stored = _assemble(
            session, settings, conversation, owner_id, plan, request=request
        )
        try:
            _store(conversation.id, plan, assembled, stored)
        except _Raced:
            session.rollback()  # a fresh read sees what the other request stored
            continue
        break
    return loaded, assembled


def _plan(
    session: Session,
    settings: Settings,
    conversation: Conversation,
    owner_id: str,
    request: Request,
) -> ContextPlan:
    granularity = request.datetime_granularity or conversation.datetime_granularity or "day"
    search_tools = conversation.search_tools
    prompts = Prompts(
        system_prompt=conversation.system_prompt,
        owner_system_prompt=cq.owner_system_prompt(session, owner_id=owner_id),
        custom_agent_prompt=conversation.custom_agent_prompt,
        replace_system_prompt=conversation.replace_system_prompt,
        reminders=reminder_texts(conversation.reminders, strict=False),
        timezone=conversation.timezone,
        datetime_granularity="minute" if granularity == "minute" else "day",
        search_tools=tuple(search_tools) if search_tools is not None else DEFAULT_SEARCH_TOOLS,
        tools_used=tuple(request.tools_used) if request.tools_used is not None else None,
    )
    return plan_context(
        settings=settings,
        now=datetime.now(UTC),
        prompts=prompts,
        model=request.model or conversation.model,
        stored_model=conversation.model,
        tools=_tools(request, conversation),
        compaction=_newest_compaction(session, conversation),
        history_tokens=conversation.total_tokens,
        strategy=request.strategy,
        options=request.options,
        default_strategy=conversation.context_strategy,
        default_options=conversation.context_options,
        context_threshold=conversation.context_threshold,
        force_filter=request.force_filter,
        skip_filter=request.skip_filter,
        format=request.output_format,
        memory_options=getattr(conversation, "memory_options", None),
        conversation_id=conversation.id,
    )


def _assemble(
    session: Session,
    settings: Settings,
    conversation: Conversation,
    owner_id: str,
    plan: ContextPlan,
    *,
    request: Request,
) -> tuple[Loaded, Assembled, cq.Carried | None]:
    """The answer, what it loaded, and the carried state it started from (None: the
    strategy takes none)."""
    memory = None
    f = plan.read.filter
    if f.strategy == "hierarchical":
        memory = load_memory(session, conversation_id=conversation.id)
    carried, stored = Carry(), None
    filtering = f.strategy != "noop" and not f.skipped
    bound = binding_applies(plan.target)
    if filtering or bound:
        stored = cq.get_carried(session, conversation_id=conversation.id, model=plan.model_key)
        state = BindState.from_json(stored.reasoning_seq, stored.binding) if bound else None
        if filtering:
            cut = stored.seq if f.strategy == "token_budget" else None
            carried = Carry(cut, stored.clear_seq, state)
        else:  # a bound target keeps the hard room's clearing line: its loops only grow
            carried = Carry(None, stored.clear_seq, state)
    run = partial(
        _run,
        session,
        settings,
        conversation=conversation,
        owner_id=owner_id,
        memory=memory,
        query=request.query,
    )
    loaded = _load(session, conversation, plan.read, carried.cut_seq)
    assembled = run(plan=plan, loaded=loaded, carried=carried)
    if assembled.window_factor is not None and loaded.removed_before:
        # a first read whose window cost less as sent than stored (reasoning left out):
        # read as deep as the budget holds as sent, once
        plan = replace(plan, read=plan.read.widened(assembled.window_factor))
        loaded = _load(session, conversation, plan.read)
        assembled = run(plan=plan, loaded=loaded, carried=carried)
    if assembled.error is not None and plan.read.window is not None:
        # fail-open means the whole history, not the window: read it all and send it
        error = assembled.error
        whole = replace(plan, read=plan.read.fail_open())
        loaded = _load(session, conversation, whole.read)
        assembled = run(
            plan=whole, loaded=loaded, carried=Carry(None, carried.clear_seq, carried.binding)
        )
        assembled.answer["error"] = error
        assembled.answer["filtered"] = False
        assembled.cut_seq = None
    return loaded, assembled, stored


def _run(
    session: Session,
    settings: Settings,
    *,
    conversation: Conversation,
    owner_id: str,
    plan: ContextPlan,
    loaded: Loaded,
    carried: Carry,
    memory: HierarchicalMemory | None,
    query: str | None,
) -> Assembled:
    file_ids = [f for m in loaded.messages for f in m.file_ids]
    files = load_file_views(session, settings=settings, owner_id=owner_id, file_ids=file_ids)
    large = context_tool_results.tool_result_views(
        session, settings, conversation_id=conversation.id, messages=loaded.messages
    )
    project_query = context_project.project_query(
        query, loaded.messages, newest_user_seq(loaded.messages)
    )

    def project(room: int, chunks_only: bool) -> ContextPlan:
        slot = context_project.load_project(
            session,
            settings,
            owner_id=owner_id,
            project_id=conversation.project_id,
            query=project_query,
            room=room,
            model=plan.read.filter.limits.model or conversation.model,
            chunks_only=chunks_only,
        )
        return replace(plan, project=slot)

    def run(with_project: ContextPlan) -> Assembled:
        keys = [file_key(f) for f in dict.fromkeys(file_ids)]
        keys += [d.source_key for d in with_project.project.documents]
        stored, highest = cq.citation_ids(
            session, conversation_id=conversation.id, source_keys=keys
        )
        return assemble_context(
            loaded.messages,
            with_project,
            files=files,
            citations=CitationMap(stored, highest),
            cut_seq=carried.cut_seq,
            clear_seq=carried.clear_seq,
            binding=carried.binding,
            memory=memory,
            conversation_id=conversation.id,
            tool_results=large,
        )

    assembled = run(project(context_project.upper_room(plan), chunks_only=False))
    if assembled.project_room is not None:  # whole files did not fit P's room: chunks
        assembled = run(project(assembled.project_room, chunks_only=True))
    return assembled


def _moved(assembled: Assembled) -> dict[str, Any]:
    """The carried fields this answer moved, by column of `context_cut_points` (one line
    per field; None: left as stored)."""
    state = assembled.binding
    fields = {
        "seq": assembled.cut_seq,
        "clear_seq": assembled.clear_seq,
        "reasoning_seq": state.watermark if state is not None else None,
        "binding": state.to_json() if state is not None else None,
    }
    return {column: value for column, value in fields.items() if value is not None}


def _store(
    conversation_id: str, plan: ContextPlan, assembled: Assembled, stored: cq.Carried | None
) -> None:
    """New citation ids and the carried fields this answer moved, in one short
    transaction (only if any), the latter only over the state the answer started from
    (`stored`; None: it took none, and writes over what is stored). _Raced when another
    request stored first: nothing is written."""
    moved = _moved(assembled)
    if not assembled.new_citations and not moved:
        return
    with session_scope() as session:
        if not cq.add_citations(
            session, conversation_id=conversation_id, ids=assembled.new_citations
        ):
            raise _Raced
        if not moved:
            return
        model = plan.model_key
        if stored is None:
            stored = cq.get_carried(session, conversation_id=conversation_id, model=model)
        if not cq.put_carried(
            session,
            conversation_id=conversation_id,
            model=model,
            moved=moved,
            version=stored.version,
        ):
            raise _Raced  # rolled back: the citation ids too


def _tools(request: Request, conversation: Conversation) -> Sequence[Any] | None:
    """The request's tools, else the conversation's; with the built-in ones if asked."""
    tools = request.tools if request.tools is not None else conversation.tools
    return builtin_tools.with_context_tools(tools) if request.builtin_tools else tools


def _newest_compaction(session: Session, conversation: Conversation) -> CompactionView | None:
    if not conversation.last_compacted_seq:
        return None
    row = q.newest_compaction(session, conversation_id=conversation.id)
    if row is None:
        return None
    return CompactionView(
        summary=row.summary, through_seq=row.through_seq, id=row.id, method=row.method
    )


def _load(
    session: Session, conversation: Conversation, plan: ReadPlan, cut: int | None = None
) -> Loaded:
    """The messages `plan.load` asks for, and the newest user message wherever it is. A
    window starts at the carried cut point `cut` (less the chain margin): what an answer
    keeps starts there, however cheap cleared tool results made it, and a new cut only
    ever moves forward."""
    window = plan.window
    past_tokens = window.past_tokens if window is not None else None
    user_seq, first_past = cq.window_seqs(
        session, conversation_id=conversation.id, past_tokens=past_tokens
    )
    also = [user_seq] if user_seq is not None else []
    if plan.compaction is not None:
        through = plan.compaction.through_seq
        after = load_context_messages(
            session, conversation=conversation, through_seq=through, also_seqs=also
        )
        return Loaded(after.messages)
    start = None
    if window is not None:
        start = window.start(last_seq=conversation.last_seq, first_seq_past=first_past)
        if start is not None and cut is not None:  # the kept history starts at the cut
            start = cut - window.margin
            start = start if start > 1 else None
    if start is None:
        return Loaded(load_context_messages(session, conversation=conversation).messages)
    window_read = load_context_messages(
        session,
        conversation=conversation,
        through_seq=start - 1,
        with_removed=True,
        also_seqs=also,
    )
    return Loaded(window_read.messages, window_read.removed_before)
