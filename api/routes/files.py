"""Files: two-phase upload, poll, content, list, delete (docs/api.md#the-file-object).

Each route is an adapter over one use case of `service.files`, called in one trip to
the threadpool (`api.deps.read` / `write`). The upload streams its multipart body to a
blob here (`api.multipart`) before the use case commits it; the long poll waits on the
worker's Redis notification (`store.notify`) between two reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse

from api.deps import OwnerDep, SettingsDep, read, write
from api.multipart import FRAMING_ALLOWANCE, receive_upload
from api.schemas.files import FileList, FilePublic, FileStatusName
from api.schemas.projects import FileUpdate
from service import files, projects, quotas
from store.blobs import BlobReader, get_blob_store
from store.notify import wait_for_file

router = APIRouter(tags=["files"])

MAX_WAIT_S = 30.0

UPLOAD_OPENAPI: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "conversation_id": {"type": "string", "maxLength": 64},
                        "project_id": {"type": "string", "maxLength": 64},
                    },
                }
            }
        },
    },
}


def _declared_file_bytes(request: Request) -> int:
    """The least the file can weigh, from Content-Length less the multipart framing."""
    try:
        declared = int(request.headers.get("content-length", "0"))
    except ValueError:
        return 0
    return max(0, declared - FRAMING_ALLOWANCE)


def _public(row: Any) -> FilePublic:
    return FilePublic.model_validate(row, from_attributes=True)


@router.post(
    "/files",
    status_code=202,
    response_model=FilePublic,
    openapi_extra=UPLOAD_OPENAPI,
    responses={
        413: {"description": "over MAX_UPLOAD_BYTES"},
        422: {"description": "empty"},
        429: {"description": "over a quota or the request rate; `detail` names the limit"},
    },
)
async def upload_file(request: Request, owner_id: OwnerDep, settings: SettingsDep) -> FilePublic:
    """Upload one file (multipart field `file`); answers 202 with the File object."""
    if quotas.enabled(settings):  # refuse before reading a body that cannot fit
        await read(
            files.check_upload_quota,
            settings=settings,
            owner_id=owner_id,
            file_bytes_at_least=_declared_file_bytes(request),
        )
    received = await receive_upload(
        content_type=request.headers.get("content-type", ""),
        content_length=request.headers.get("content-length"),
        body=request.stream(),
        blobs=get_blob_store(settings),
        limit=settings.MAX_UPLOAD_BYTES,
    )
    try:
        row = await write(
            files.accept_upload,
            settings=settings,
            owner_id=owner_id,
            blob=received.writer,
            filename=received.filename,
            conversation_id=received.fields.get("conversation_id"),
            project_id=received.fields.get("project_id"),
        )
    finally:
        received.writer.abort()  # a no-op once committed
    return _public(row)


@router.get("/files/{file_id}", response_model=FilePublic)
async def get_file(
    file_id: str,
    owner_id: OwnerDep,
    settings: SettingsDep,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=MAX_WAIT_S,
            description=(
                "long poll: answer as soon as the file is ready or failed, or after this many "
                "seconds with its current status"
            ),
        ),
    ] = 0,
) -> FilePublic:
    """The File object. Poll it, or pass `wait=S` to be answered when processing ends."""
    row = await read(files.get_file, owner_id=owner_id, file_id=file_id)
    if wait > 0 and not files.is_final(row):

        async def reread_is_final() -> bool:
            nonlocal row
            row = await read(files.get_file, owner_id=owner_id, file_id=file_id)
            return files.is_final(row)

        await wait_for_file(settings.REDIS_URL, file_id, wait, reread_is_final)
        if not files.is_final(row):
            row = await read(files.get_file, owner_id=owner_id, file_id=file_id)
    return _public(row)


@router.get(
    "/files/{file_id}/content",
    responses={
        200: {"content": {"text/markdown": {}, "image/*": {}, "audio/*": {}}},
        409: {"description": "not ready, or failed"},
        410: {"description": "the processed artefact is missing from storage"},
    },
)
async def get_file_content(file_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """The processed artefact: text/markdown, or the resized image / subsampled audio."""
    art = await read(files.file_content, settings=settings, owner_id=owner_id, file_id=file_id)
    if art.blob is not None:
        return StreamingResponse(
            _chunks(art.blob),
            media_type=art.media_type,
            headers={"Content-Length": str(art.blob.size)},
        )
    return Response((art.text or "").encode("utf-8"), media_type=art.media_type)


def _chunks(blob: BlobReader) -> Iterator[bytes]:
    """The stored artefact, streamed from the blob store (closed however it ends)."""
    with blob:
        yield from blob


@router.get("/files", response_model=FileList)
async def list_files(  # noqa: PLR0917 - FastAPI query parameters
    owner_id: OwnerDep,
    status: FileStatusName | None = None,
    conversation_id: Annotated[str | None, Query(max_length=64)] = None,
    project_id: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> FileList:
    """Newest first. Pass `next_cursor` back as `cursor` for the next page."""
    rows, next_cursor = await read(
        files.list_files,
        owner_id=owner_id,
        limit=limit,
        status=status,
        conversation_id=conversation_id,
        project_id=project_id,
        cursor=cursor,
    )
    return FileList(data=[_public(r) for r in rows], next_cursor=next_cursor)


@router.patch("/files/{file_id}", response_model=FilePublic)
async def update_file(
    file_id: str, body: FileUpdate, owner_id: OwnerDep, settings: SettingsDep
) -> FilePublic:
    """Move the file into one of your projects (`{"project_id": "…"}`) or out (`null`);
    404 for a missing or foreign project. A ready file moved in is indexed for search."""
    row = await write(
        projects.move_file,
        settings=settings,
        owner_id=owner_id,
        file_id=file_id,
        project_id=body.project_id,
    )
    return _public(row)


@router.delete("/files/{file_id}", status_code=204)
async def delete_file(file_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    await write(files.delete_file, settings=settings, owner_id=owner_id, file_id=file_id)
    return Response(status_code=204)
