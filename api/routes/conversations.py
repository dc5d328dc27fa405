"""Routes: conversations, messages, compaction triggers and hierarchical memory (SPEC §2).

Another owner's conversation answers 404 exactly as a missing one does. Routes that
enqueue work open their own transaction, commit it, and only then enqueue.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import APIRouter, Body, HTTPException, Query, Response
from pydantic import ValidationError

from api.deps import OwnerDep, ReadSessionDep, SettingsDep
from api.history_schemas import (
    CompactionPublic,
    ConversationCreate,
    ConversationPublic,
    ConversationUpdate,
    DecisionIn,
    GoalIn,
    JobAccepted,
    MessageBatch,
    MessageIn,
    MessagePatch,
    PhaseIn,
)
from contextq.errors import ValidationFailed
from contextq.history.memory import HierarchicalMemory
from contextq.history.strategies import validate_options, validate_strategy, validate_threshold
from contextq.settings import Settings
from store import history_queries as q
from store.db import session_scope
from store.history_tables import Conversation
from tasks.history import enqueue_compaction

log = logging.getLogger("contextq.api.conversations")

router = APIRouter(tags=["conversations"])

NOT_FOUND = "conversation not found"


def json_response(data: Any, status_code: int = 200) -> Response:
    """orjson straight to bytes: datetimes as ISO 8601, no second validation pass."""
    body = orjson.dumps(data, option=orjson.OPT_NAIVE_UTC)
    return Response(body, status_code=status_code, media_type="application/json")


def conversation_public(conversation: Conversation) -> dict[str, Any]:
    return ConversationPublic.model_validate(conversation, from_attributes=True).model_dump()


def _check_strategy(data: dict[str, Any], current: Conversation | None = None) -> None:
    """Validate the strategy name, its options and the threshold; 422 naming the field."""
    strategy = data.get("context_strategy", current.context_strategy if current else None)
    options = data.get("context_options", current.context_options if current else None)
    if strategy is not None:
        validate_strategy(strategy, field="context_strategy")
    if ("context_strategy" in data or "context_options" in data) and options is not None:
        data["context_options"] = validate_options(
            strategy or "token_budget", options, field="context_options"
        )
    if data.get("context_threshold") is not None:
        data["context_threshold"] = validate_threshold(data["context_threshold"])


def _owned(session: Any, owner_id: str, conversation_id: str, **kw: Any) -> Conversation:
    conversation = q.get_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, **kw
    )
    if conversation is None:
        raise HTTPException(404, NOT_FOUND)
    return conversation


# ---------------------------------------------------------------- conversations


@router.post("/conversations", status_code=201, response_model=ConversationPublic)
def create_conversation(owner_id: OwnerDep, body: ConversationCreate | None = None) -> Response:
    data = (body or ConversationCreate()).model_dump()
    _check_strategy(data)
    with session_scope() as session:
        conversation = q.create_conversation(session, owner_id=owner_id, data=data)
        out = conversation_public(conversation)
    return json_response(out, 201)


@router.get("/conversations/{conversation_id}", response_model=ConversationPublic)
def get_conversation(conversation_id: str, owner_id: OwnerDep, session: ReadSessionDep) -> Response:
    return json_response(conversation_public(_owned(session, owner_id, conversation_id)))


@router.patch("/conversations/{conversation_id}", response_model=ConversationPublic)
def update_conversation(
    conversation_id: str, body: ConversationUpdate, owner_id: OwnerDep
) -> Response:
    data = body.model_dump(exclude_unset=True)
    if data.get("replace_system_prompt", False) is None:
        raise ValidationFailed(
            "replace_system_prompt must be true or false", field="replace_system_prompt"
        )
    with session_scope() as session:
        conversation = _owned(session, owner_id, conversation_id, for_update=True)
        _check_strategy(data, conversation)
        conversation = q.update_conversation(session, conversation=conversation, data=data)
        out = conversation_public(conversation)
    return json_response(out)


@router.delete("/conversations/{conversation_id}", status_code=204)
def delete_conversation(conversation_id: str, owner_id: OwnerDep) -> Response:
    with session_scope() as session:
        conversation = _owned(session, owner_id, conversation_id, for_update=True)
        q.delete_conversation(session, conversation=conversation)
    return Response(status_code=204)


# ---------------------------------------------------------------- messages


def _parse_messages(payload: Any, settings: Settings) -> tuple[list[dict[str, Any]], bool]:
    """One message or {"messages": [...]}; returns (validated dicts, was_batch)."""
    if not isinstance(payload, dict):
        raise HTTPException(422, 'send one message object or {"messages": [...]}')
    batch = "messages" in payload
    if (
        batch
        and isinstance(payload["messages"], list)
        and len(payload["messages"]) > q.MAX_BATCH_MESSAGES
    ):
        raise HTTPException(
            413,
            f"a batch holds at most {q.MAX_BATCH_MESSAGES} messages, got "
            f"{len(payload['messages'])}; send the history in several requests",
        )
    try:
        parsed = (
            MessageBatch.model_validate(payload).messages
            if batch
            else [MessageIn.model_validate(payload)]
        )
    except ValidationError as exc:
        prefix = ["body"]
        detail = [
            {"loc": prefix + list(e["loc"]), "msg": e["msg"], "type": e["type"]}
            for e in exc.errors(include_url=False)[:20]
        ]
        raise HTTPException(422, detail) from None
    out: list[dict[str, Any]] = []
    for index, message in enumerate(parsed):
        where = f"messages[{index}]" if batch else ""
        _check_message(message, where)
        data = message.model_dump(exclude_none=True)
        if message.tool_calls:
            data["tool_calls"] = [c.model_dump() for c in message.tool_calls]
        out.append(data)
    return out, batch


def _check_message(message: MessageIn, where: str) -> None:
    def field(name: str) -> str:
        return f"{where}.{name}" if where else name

    if message.role == "tool" and not message.tool_call_id:
        raise ValidationFailed(
            "a tool message needs the tool_call_id it answers", field=field("tool_call_id")
        )
    if message.tool_calls and message.role != "assistant":
        raise ValidationFailed(
            "only assistant messages carry tool_calls", field=field("tool_calls")
        )
    if message.tool_call_id and message.role != "tool":
        raise ValidationFailed(
            "only tool messages carry a tool_call_id", field=field("tool_call_id")
        )


@router.post("/conversations/{conversation_id}/messages", status_code=201)
def add_messages(
    conversation_id: str,
    owner_id: OwnerDep,
    settings: SettingsDep,
    payload: Any = Body(...),  # noqa: B008
) -> Response:
    """One message, or `{"messages": [...]}` (up to 10 000 in one transaction)."""
    messages, batch = _parse_messages(payload, settings)
    with session_scope() as session:
        result = q.insert_messages(
            session,
            conversation_id=conversation_id,
            owner_id=owner_id,
            messages=messages,
            settings=settings,
        )
        if result is None:
            raise HTTPException(404, NOT_FOUND)
        job = None
        if result.crossed_compaction_threshold:
            job = q.create_job(
                session, owner_id=owner_id, kind=q.COMPACT_JOB_KIND, target_id=conversation_id
            )
    if job is not None:  # after the commit: the worker must find the rows
        enqueue_compaction(conversation_id, job.id, settings=settings)
    public = [q.message_public(r) for r in result.rows]
    if batch:
        body: dict[str, Any] = {"data": public, "next_cursor": None}
        if job is not None:
            body["compaction_job_id"] = job.id
        return json_response(body, 201)
    return json_response(public[0], 201)


@router.get("/conversations/{conversation_id}/messages")
def list_messages(
    conversation_id: str,
    owner_id: OwnerDep,
    session: ReadSessionDep,
    limit: int = Query(100, ge=1, le=q.MAX_PAGE),
    cursor: str | None = Query(None, max_length=20),
) -> Response:
    """The original history in seq order, never altered by filtering or compaction."""
    _owned(session, owner_id, conversation_id)
    after = 0
    if cursor:
        if not cursor.isdigit():
            raise ValidationFailed(
                "cursor must be a next_cursor value from this list", field="cursor"
            )
        after = int(cursor)
    rows, next_seq = q.list_messages(
        session, conversation_id=conversation_id, after_seq=after, limit=limit
    )
    return json_response(
        {
            "data": [q.message_public(r.model_dump()) for r in rows],
            "next_cursor": None if next_seq is None else str(next_seq),
        }
    )


@router.patch("/conversations/{conversation_id}/messages/{message_id}")
def patch_message(
    conversation_id: str,
    message_id: str,
    body: MessagePatch,
    owner_id: OwnerDep,
    settings: SettingsDep,
) -> Response:
    """Pin or unpin a message (the only change a stored message gets)."""
    with session_scope() as session:
        conversation = _owned(session, owner_id, conversation_id, for_update=True)
        message = q.get_message(session, conversation_id=conversation_id, message_id=message_id)
        if message is None:
            raise HTTPException(404, "message not found")
        q.set_pinned(
            session,
            conversation=conversation,
            message=message,
            pinned=body.pinned,
            settings=settings,
        )
        out = q.message_public(message.model_dump())
    return json_response(out)


# ---------------------------------------------------------------- compaction


@router.post(
    "/conversations/{conversation_id}/compact", status_code=202, response_model=JobAccepted
)
def compact(conversation_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    with session_scope() as session:
        _owned(session, owner_id, conversation_id)
        job = q.create_job(
            session, owner_id=owner_id, kind=q.COMPACT_JOB_KIND, target_id=conversation_id
        )
    enqueue_compaction(conversation_id, job.id, settings=settings)
    return json_response({"job_id": job.id}, 202)


@router.get("/conversations/{conversation_id}/compactions")
def list_compactions(
    conversation_id: str,
    owner_id: OwnerDep,
    session: ReadSessionDep,
    limit: int = Query(100, ge=1, le=q.MAX_PAGE),
) -> Response:
    _owned(session, owner_id, conversation_id)
    rows = q.list_compactions(session, conversation_id=conversation_id, limit=limit)
    return json_response(
        {
            "data": [
                CompactionPublic.model_validate(r, from_attributes=True).model_dump() for r in rows
            ],
            "next_cursor": None,
        }
    )


# ---------------------------------------------------------------- memory


def _memory(session: Any, conversation_id: str) -> HierarchicalMemory:
    return HierarchicalMemory.from_dict(
        q.get_memory_state(session, conversation_id=conversation_id)
    )


@router.get("/conversations/{conversation_id}/memory")
def get_memory(conversation_id: str, owner_id: OwnerDep, session: ReadSessionDep) -> Response:
    _owned(session, owner_id, conversation_id)
    return json_response(_memory(session, conversation_id).snapshot())


def _write_memory(owner_id: str, conversation_id: str, change: Any) -> Response:
    with session_scope() as session:
        _owned(session, owner_id, conversation_id, for_update=True)
        memory = _memory(session, conversation_id)
        change(memory)
        q.save_memory_state(session, conversation_id=conversation_id, state=memory.to_dict())
    return json_response(memory.snapshot())


@router.put("/conversations/{conversation_id}/memory/goal")
def set_goal(conversation_id: str, body: GoalIn, owner_id: OwnerDep) -> Response:
    return _write_memory(owner_id, conversation_id, lambda m: m.set_goal(body.text, body.subtasks))


@router.put("/conversations/{conversation_id}/memory/phase")
def set_phase(conversation_id: str, body: PhaseIn, owner_id: OwnerDep) -> Response:
    return _write_memory(owner_id, conversation_id, lambda m: m.set_phase(body.phase))


@router.post("/conversations/{conversation_id}/memory/decisions", status_code=201)
def add_decision(conversation_id: str, body: DecisionIn, owner_id: OwnerDep) -> Response:
    response = _write_memory(
        owner_id,
        conversation_id,
        lambda m: m.add_decision(body.decision, rationale=body.rationale, impact=body.impact),
    )
    response.status_code = 201
    return response


@router.post("/conversations/{conversation_id}/memory/subtasks/{name}/complete")
def complete_subtask(conversation_id: str, name: str, owner_id: OwnerDep) -> Response:
    return _write_memory(owner_id, conversation_id, lambda m: m.complete_subtask(name))
