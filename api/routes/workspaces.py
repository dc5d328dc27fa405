"""Workspaces: PUT / list / GET (raw or processed) / DELETE files of a conversation's
workspace (docs/workspaces.md).

Each route is an adapter over the use cases of `service.workspaces`. The PUT refuses
what it can before reading the body (`prepare_put`: the owner, the path, the declared
size), streams the body into a blob and a staged temp file (`api.raw_body`), then
commits (`put_entry`). Another owner's conversation answers 404 on every route.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, BinaryIO, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.convertors import Convertor, register_url_convertor

from api.deps import OwnerDep, SettingsDep, read, write
from api.raw_body import declared_length, stream_body
from api.responses import json_response
from api.schemas.workspaces import (
    WorkspaceEntryList,
    WorkspaceEntryPublic,
    WorkspacePortion,
    WorkspaceProcessedView,
)
from contextq.errors import ValidationFailed
from service import workspaces
from store.blobs import get_blob_store

router = APIRouter(tags=["workspaces"])


class WorkspacePathConvertor(Convertor[str]):
    """Like Starlette's `path`, but a line break matches too: a path holding one reaches
    the path check (422 with the reason) instead of missing every route (404)."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("workspace_path", WorkspacePathConvertor())

BASE = "/conversations/{conversation_id}/workspace"
READ_CHUNK = 256 * 1024
PUT_OPENAPI: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    }
}
PATH_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "no such conversation (or another owner's), or no file at the path"},
    422: {"description": "a refused path (`..`, absolute, links, …) or one naming a directory"},
}


def _entry(view: workspaces.EntryView) -> WorkspaceEntryPublic:
    return WorkspaceEntryPublic.model_validate(view, from_attributes=True)


@router.put(
    BASE + "/{path:workspace_path}",
    status_code=201,
    response_model=WorkspaceEntryPublic,
    openapi_extra=PUT_OPENAPI,
    responses={
        **PATH_ERRORS,
        413: {"description": "over MAX_UPLOAD_BYTES"},
        429: {"description": "over MAX_STORAGE_BYTES_PER_OWNER"},
    },
)
async def put_workspace_file(
    conversation_id: str, path: str, request: Request, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """Write the raw body to `path` (atomically: readers see the old file or the new
    one); it is also a File, processed by the worker. 201 with the entry."""
    limit = settings.MAX_UPLOAD_BYTES
    declared = declared_length(request.headers.get("content-length"), limit)
    ticket = await read(
        workspaces.prepare_put,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        path=path,
        declared_bytes=declared,
    )
    blob = get_blob_store(settings).writer(limit=limit)
    try:
        await stream_body(request.stream(), [blob, ticket.staged], limit=limit)
        entry = await write(
            workspaces.put_entry,
            settings=settings,
            owner_id=owner_id,
            conversation_id=conversation_id,
            relative=ticket.relative,
            blob=blob,
            staged=ticket.staged,
        )
    finally:
        blob.abort()  # no-ops once committed / published
        ticket.staged.abort()
    return json_response(_entry(entry), 201)


@router.get(BASE, response_model=WorkspaceEntryList, responses={404: PATH_ERRORS[404]})
async def list_workspace(
    conversation_id: str,
    owner_id: OwnerDep,
    prefix: Annotated[
        str, Query(max_length=1100, description="only paths starting with this")
    ] = "",
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(max_length=2000)] = None,
) -> Response:
    """The workspace's files in path order. Pass `next_cursor` back as `cursor`."""
    rows, next_cursor = await read(
        workspaces.list_entries,
        owner_id=owner_id,
        conversation_id=conversation_id,
        prefix=prefix,
        limit=limit,
        cursor=cursor,
    )
    return json_response(
        WorkspaceEntryList(data=[_entry(r) for r in rows], next_cursor=next_cursor)
    )


def _chunks(fh: BinaryIO) -> Iterator[bytes]:
    try:
        while chunk := fh.read(READ_CHUNK):
            yield chunk
    finally:
        fh.close()


@router.get(
    BASE + "/{path:workspace_path}",
    responses={
        200: {
            "content": {"application/octet-stream": {}, "application/json": {}},
            "description": "the raw bytes; with view=processed, a WorkspaceProcessedView",
        },
        **PATH_ERRORS,
        409: {"description": "view=processed of a file not processed yet, or failed"},
    },
)
async def get_workspace_file(  # noqa: PLR0917 - FastAPI query parameters
    conversation_id: str,
    path: str,
    owner_id: OwnerDep,
    settings: SettingsDep,
    view: Literal["processed"] | None = None,
    offset: Annotated[int | None, Query(ge=0, description="first line/row/page, from 0")] = None,
    limit: Annotated[int | None, Query(ge=1, description="lines/rows/pages to return")] = None,
    sheet: Annotated[str | None, Query(max_length=255, description="workbook sheet")] = None,
) -> Response:
    """The file's raw bytes; with `view=processed`, its processed text (and with
    `offset`/`limit`, later lines, data rows or pages of the whole file)."""
    if view is None:
        if offset is not None or limit is not None or sheet is not None:
            raise ValidationFailed("offset, limit and sheet go with view=processed")
        raw = await read(
            workspaces.open_raw,
            settings=settings,
            owner_id=owner_id,
            conversation_id=conversation_id,
            path=path,
        )
        headers = {"Content-Length": str(raw.size)}
        return StreamingResponse(_chunks(raw.fh), media_type=raw.media_type, headers=headers)
    result = await read(
        workspaces.processed_view,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        path=path,
        offset=offset,
        limit=limit,
        sheet=sheet,
    )
    return json_response(_processed(result))


def _processed(result: workspaces.ProcessedView) -> WorkspaceProcessedView:
    portion = None
    if result.portion is not None:
        portion = WorkspacePortion.model_validate(result.portion, from_attributes=True)
    return WorkspaceProcessedView(
        path=result.path,
        file_id=result.file_id,
        status=result.status,
        category=result.category,
        file_type=result.file_type,
        text=result.text,
        token_count=result.token_count,
        processed_token_count=result.processed_token_count,
        truncation=result.truncation,
        portion=portion,
    )


@router.delete(BASE + "/{path:workspace_path}", status_code=204, responses=PATH_ERRORS)
async def delete_workspace_file(
    conversation_id: str, path: str, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """Delete the file, its File and the directories it leaves empty."""
    await write(
        workspaces.delete_entry,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        path=path,
    )
    return Response(status_code=204)
