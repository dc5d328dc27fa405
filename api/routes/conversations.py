"""Routes: conversations, and their compactions (docs/history.md#compaction).

Each route is an adapter over one use case of `service.history`, called in one trip
to the threadpool (`api.deps.read` / `write`). Another owner's conversation answers
404 exactly as a missing one does.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Response

from api.deps import OwnerDep, SettingsDep, read, write
from api.responses import json_response
from api.schemas.history import (
    CompactionList,
    CompactionPublic,
    ConversationCreate,
    ConversationList,
    ConversationPublic,
    ConversationUpdate,
    JobAccepted,
)
from service import history

router = APIRouter(tags=["conversations"])


@router.post("/conversations", status_code=201, response_model=ConversationPublic)
async def create_conversation(
    owner_id: OwnerDep, settings: SettingsDep, body: ConversationCreate | None = None
) -> Response:
    data = (body or ConversationCreate()).model_dump()
    row = await write(history.create_conversation, settings=settings, owner_id=owner_id, data=data)
    return json_response(ConversationPublic.model_validate(row), 201)


@router.get("/conversations", response_model=ConversationList)
async def list_conversations(
    owner_id: OwnerDep,
    limit: int = Query(50, ge=1, le=history.MAX_PAGE),
    cursor: str | None = Query(None, max_length=512),
) -> Response:
    """The key owner's conversations, newest first. Pass `next_cursor` back as `cursor`."""
    rows, next_cursor = await read(
        history.list_conversations, owner_id=owner_id, limit=limit, cursor=cursor
    )
    data = [ConversationPublic.model_validate(r) for r in rows]
    return json_response(ConversationList(data=data, next_cursor=next_cursor))


@router.get("/conversations/{conversation_id}", response_model=ConversationPublic)
async def get_conversation(conversation_id: str, owner_id: OwnerDep) -> Response:
    row = await read(history.get_conversation, owner_id=owner_id, conversation_id=conversation_id)
    return json_response(ConversationPublic.model_validate(row))


@router.patch("/conversations/{conversation_id}", response_model=ConversationPublic)
async def update_conversation(
    conversation_id: str, body: ConversationUpdate, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    row = await write(
        history.update_conversation,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        data=body.model_dump(exclude_unset=True),
    )
    return json_response(ConversationPublic.model_validate(row))


@router.delete("/conversations/{conversation_id}", status_code=204)
async def delete_conversation(
    conversation_id: str, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """Delete the conversation with its messages, compactions, memory, checkpoint and workspace."""
    await write(
        history.delete_conversation,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
    )
    return Response(status_code=204)


@router.post(
    "/conversations/{conversation_id}/compact", status_code=202, response_model=JobAccepted
)
async def compact(conversation_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """Enqueue `compact_conversation`; poll the job at `GET /v1/jobs/{job_id}`."""
    job_id = await write(
        history.request_compaction,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
    )
    return json_response(JobAccepted(job_id=job_id), 202)


@router.get("/conversations/{conversation_id}/compactions", response_model=CompactionList)
async def list_compactions(
    conversation_id: str,
    owner_id: OwnerDep,
    limit: int = Query(100, ge=1, le=history.MAX_PAGE),
) -> Response:
    rows = await read(
        history.list_compactions, owner_id=owner_id, conversation_id=conversation_id, limit=limit
    )
    data = [CompactionPublic.model_validate(r) for r in rows]
    return json_response(CompactionList(data=data, next_cursor=None))
