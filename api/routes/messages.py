"""Routes: a conversation's messages (docs/api.md#routes): append one or a batch, list (or read the
originals a summary line cites, `?seqs=12,40`, docs/provenance.md), pin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Query, Response
from pydantic import ValidationError

from api.deps import OwnerDep, SettingsDep, read, write
from api.responses import json_response
from api.schemas.history import (
    NATIVE_BATCHES,
    MessageBatch,
    MessageCreate,
    MessageList,
    MessagePin,
    MessagePublic,
)
from contextq.errors import Problem, ValidationFailed
from contextq.history.native import BODY_KEYS, check_format
from service import history
from service.history.messages import NativeBatch, messages_by_seqs

router = APIRouter(tags=["messages"])


def _invalid(exc: ValidationError) -> ValidationFailed:
    """The body's schema errors (the first 20), located in the body as FastAPI's are."""
    problems = [
        Problem(loc=("body", *e["loc"]), msg=e["msg"], type=e["type"])
        for e in exc.errors(include_url=False)[:20]
    ]
    return ValidationFailed(problems[0].msg if problems else str(exc), problems=problems)


def _parse(payload: Any) -> tuple[list[dict[str, Any]], bool]:
    """One message or {"messages": [...]}: (the validated messages as dicts, was_batch)."""
    if not isinstance(payload, dict):
        raise ValidationFailed('send one message object or {"messages": [...]}')
    batch = "messages" in payload
    if batch and isinstance(payload["messages"], list):
        history.check_batch_size(len(payload["messages"]))  # before validating them all
    try:
        parsed = (
            MessageBatch.model_validate(payload).messages
            if batch
            else [MessageCreate.model_validate(payload)]
        )
    except ValidationError as exc:
        raise _invalid(exc) from None
    return [m.model_dump(exclude_none=True) for m in parsed], batch


def _parse_native(payload: dict[str, Any]) -> NativeBatch:
    """`{"format": …, "messages" | "items" | "contents": [...], "model"?}`
    (docs/api.md#native-turns): the body's shape here, each turn's in the engine."""
    fmt = check_format(payload["format"])
    key = BODY_KEYS[fmt]
    if isinstance(payload.get(key), list):
        history.check_batch_size(len(payload[key]))  # before validating them all
    try:
        body = NATIVE_BATCHES[fmt].model_validate(payload)
    except ValidationError as exc:
        raise _invalid(exc) from None
    return NativeBatch(fmt, getattr(body, key), body.model)


@router.post("/conversations/{conversation_id}/messages", status_code=201)
async def append_messages(
    conversation_id: str,
    owner_id: OwnerDep,
    settings: SettingsDep,
    payload: Any = Body(...),  # noqa: B008
) -> Response:
    """One message, or `{"messages": [...]}` (up to 10 000 in one transaction), or a
    native batch: `{"format": "anthropic", "messages": [...]}`, `{"format": "responses",
    "items": [...]}`, `{"format": "gemini", "contents": [...]}`, with an optional
    `"model"` (docs/api.md#native-turns)."""
    native = _parse_native(payload) if isinstance(payload, dict) and "format" in payload else None
    messages, batch = ([], True) if native else _parse(payload)
    appended = await write(
        history.append_messages,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        messages=messages,
        native=native,
        batch=batch,
    )
    public = [MessagePublic.model_validate(row) for row in appended.rows]
    if not batch:
        return json_response(public[0], 201)
    body: dict[str, Any] = {"data": public, "next_cursor": None}
    if appended.compaction_job_id is not None:
        body["compaction_job_id"] = appended.compaction_job_id
    return json_response(body, 201)


@router.get("/conversations/{conversation_id}/messages", response_model=MessageList)
async def list_messages(
    conversation_id: str,
    owner_id: OwnerDep,
    limit: int = Query(100, ge=1, le=history.MAX_PAGE),
    cursor: str | None = Query(None, max_length=20),
    seqs: str | None = Query(
        None,
        max_length=2000,
        description="Only these messages, e.g. `12,40`: the originals a summary line cites "
        "as (#12, #40). Seqs the conversation does not have are refused (422); no cursor.",
    ),
) -> Response:
    """The original history in seq order, never altered by filtering or compaction; with
    `seqs`, only the messages of those seqs."""
    if seqs is not None:
        if cursor is not None:
            raise ValidationFailed("seqs and cursor do not go together: seqs names the messages")
        page = await read(
            messages_by_seqs, owner_id=owner_id, conversation_id=conversation_id, seqs=seqs
        )
    else:
        page = await read(
            history.list_messages,
            owner_id=owner_id,
            conversation_id=conversation_id,
            cursor=cursor,
            limit=limit,
        )
    data = [MessagePublic.model_validate(row) for row in page.rows]
    return json_response(MessageList(data=data, next_cursor=page.next_cursor))


@router.patch(
    "/conversations/{conversation_id}/messages/{message_id}", response_model=MessagePublic
)
async def pin_message(
    conversation_id: str,
    message_id: str,
    body: MessagePin,
    owner_id: OwnerDep,
    settings: SettingsDep,
) -> Response:
    """Pin or unpin a message (the only change a stored message gets)."""
    row = await write(
        history.pin_message,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        message_id=message_id,
        pinned=body.pinned,
    )
    return json_response(MessagePublic.model_validate(row))
