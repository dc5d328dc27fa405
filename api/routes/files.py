"""Files: two-phase upload, poll, content, list, delete (SPEC §2 "Files").

Phase one happens here: the body streams to a content-addressed blob, a row
is committed as `uploaded`, and only after the commit `process_file(file_id)`
is enqueued. If the enqueue fails the row stays `uploaded` and the recovery
sweep enqueues it later; the client still gets 202.
"""

from __future__ import annotations

import logging
import mimetypes
import time
import unicodedata
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse
from sqlalchemy import delete
from sqlmodel import col
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from api.deps import OwnerDep, SettingsDep
from api.multipart import ReceivedUpload, UploadError, receive_upload
from api.schemas import FileList, FilePublic, FileStatusName
from contextq.settings import Settings
from store import files_queries as q
from store.blobs import get_blob_store
from store.db import get_engine, read_session, session_scope
from store.notify import wait_for_file
from store.tables import File, FileContent, FileStatus, utcnow

log = logging.getLogger("contextq.api.files")

router = APIRouter(tags=["files"])

NOT_FOUND = "file not found"
BLOB_DELETE_GRACE_S = 60.0

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


def _tag(fields: dict[str, str], name: str) -> str | None:
    value = fields.get(name, "").strip()
    if not value:
        return None
    if len(value) > 64 or any(unicodedata.category(c)[0] in "CZ" and c != " " for c in value):
        raise UploadError(f"`{name}` must be at most 64 printable characters")
    return value


def _store_and_enqueue(received: ReceivedUpload, row: File, settings: Settings) -> None:
    """Blob (fsync + rename), then the row, THEN the enqueue: one trip to the threadpool
    for all three. If the enqueue fails the row stays `uploaded` for the recovery sweep."""
    from service import enqueue

    received.writer.commit()
    with get_engine().begin() as conn:
        q.insert_file(conn, row=row)
    try:
        enqueue.process_file(row.id, settings=settings)
    except Exception:
        log.exception("enqueue of %s failed; the recovery sweep will pick it up", row.id)


@router.post(
    "/files",
    status_code=202,
    response_model=FilePublic,
    openapi_extra=UPLOAD_OPENAPI,
    responses={413: {"description": "over MAX_UPLOAD_BYTES"}, 422: {"description": "empty"}},
)
async def upload_file(request: Request, owner_id: OwnerDep, settings: SettingsDep) -> FilePublic:
    """Upload one file (multipart field `file`); answers 202 with the File object."""
    try:
        received = await receive_upload(
            content_type=request.headers.get("content-type", ""),
            content_length=request.headers.get("content-length"),
            body=request.stream(),
            blobs=get_blob_store(settings),
            limit=settings.MAX_UPLOAD_BYTES,
        )
    except UploadError as exc:
        headers = {"Connection": "close"} if exc.status_code == 413 else None
        raise HTTPException(exc.status_code, exc.detail, headers=headers) from None
    except ClientDisconnect:  # the client went away mid-upload; the temp file is gone
        raise HTTPException(400, "the upload was interrupted") from None
    try:
        conversation_id = _tag(received.fields, "conversation_id")
        project_id = _tag(received.fields, "project_id")
    except UploadError as exc:
        received.writer.abort()
        headers = {"Connection": "close"} if exc.status_code == 413 else None
        raise HTTPException(exc.status_code, exc.detail, headers=headers) from None
    media_type = mimetypes.guess_type(received.filename, strict=False)[0]
    now = utcnow()
    row = File(
        owner_id=owner_id,
        filename=received.filename,
        size_bytes=received.size,
        sha256=received.sha256,
        media_type=media_type or "application/octet-stream",
        conversation_id=conversation_id,
        project_id=project_id,
        created_at=now,
        updated_at=now,
        # if the enqueue below is lost, the recovery sweep takes the row after the grace
        recover_after=now + timedelta(seconds=settings.RECOVERY_UPLOADED_GRACE_S),
    )
    try:
        await run_in_threadpool(_store_and_enqueue, received, row, settings)
    finally:
        received.writer.abort()  # a no-op once committed
    return FilePublic.from_row(row)


def _owned(session: Any, owner_id: str, file_id: str) -> File:
    row = q.get_owned(session, owner_id=owner_id, file_id=file_id)
    if row is None:
        raise HTTPException(404, NOT_FOUND)
    return row


def _read_owned(owner_id: str, file_id: str) -> File:
    with read_session() as session:
        return _owned(session, owner_id, file_id)


# Routes are async and do their database work in ONE threadpool call: sync routes and
# sync dependencies each cost a thread hop, which dominates a poll under load.
MAX_WAIT_S = 30.0
FINAL_STATUSES = (FileStatus.READY, FileStatus.FAILED)


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
    row = await run_in_threadpool(_read_owned, owner_id, file_id)
    if wait > 0 and row.status not in FINAL_STATUSES:

        async def is_final() -> bool:
            nonlocal row
            row = await run_in_threadpool(_read_owned, owner_id, file_id)
            return row.status in FINAL_STATUSES

        await wait_for_file(settings.REDIS_URL, file_id, wait, is_final)
        if row.status not in FINAL_STATUSES:
            row = await run_in_threadpool(_read_owned, owner_id, file_id)
    return FilePublic.from_row(row)


def _content(owner_id: str, file_id: str, settings: Settings) -> Response:
    with read_session() as session:
        row = _owned(session, owner_id, file_id)
        if row.status == FileStatus.FAILED:
            raise HTTPException(409, f"the file failed to process: {row.error}")
        if row.status != FileStatus.READY:
            raise HTTPException(
                409,
                f"the file is not ready yet (status: {row.status}); poll "
                f"GET /v1/files/{row.id} until it is ready",
            )
        if not row.content_sha256:  # a text result
            text = q.file_text(session, file_id=row.id) or ""
            return Response(text.encode("utf-8"), media_type="text/markdown; charset=utf-8")
    path = get_blob_store(settings).path(row.content_sha256)
    if not path.is_file():
        raise HTTPException(
            410, "the processed content is missing from storage; upload the file again"
        )
    return FileResponse(path, media_type=row.content_media_type or "application/octet-stream")


@router.get(
    "/files/{file_id}/content",
    responses={
        200: {"content": {"text/markdown": {}, "image/*": {}, "audio/*": {}}},
        409: {"description": "not ready, or failed"},
    },
)
async def get_file_content(file_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """The processed artefact: text/markdown, or the resized image / subsampled audio."""
    return await run_in_threadpool(_content, owner_id, file_id, settings)


def _list(owner_id: str, **kw: Any) -> FileList:
    with read_session() as session:
        rows, next_cursor = q.list_owned(session, owner_id=owner_id, **kw)
    return FileList(data=[FilePublic.from_row(r) for r in rows], next_cursor=next_cursor)


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
    after = None
    if cursor:
        try:
            after = q.decode_cursor(cursor)
        except ValueError:
            raise HTTPException(
                422, "invalid cursor: pass next_cursor from the previous page"
            ) from None
    return await run_in_threadpool(
        _list,
        owner_id,
        limit=limit,
        status=status,
        conversation_id=conversation_id,
        project_id=project_id,
        after=after,
    )


def _delete(owner_id: str, file_id: str, settings: Settings) -> None:
    with session_scope() as session:
        row = _owned(session, owner_id, file_id)
        shas = {s for s in (row.sha256, row.content_sha256) if s}
        session.execute(delete(FileContent).where(col(FileContent.file_id) == row.id))
        session.delete(row)
    _collect_blobs(shas, settings)


@router.delete("/files/{file_id}", status_code=204)
async def delete_file(file_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    await run_in_threadpool(_delete, owner_id, file_id, settings)
    return Response(status_code=204)


def _collect_blobs(shas: set[str], settings: Settings) -> None:
    """Remove blobs no row points at any more. A blob written in the last minute is kept:
    an upload of the same bytes may be about to commit its row."""
    blobs = get_blob_store(settings)
    try:
        with session_scope(write=False) as session:
            orphans = [s for s in shas if not q.blob_referenced(session, sha256=s)]
        for sha in orphans:
            path = blobs.path(sha)
            try:
                if time.time() - path.stat().st_mtime > BLOB_DELETE_GRACE_S:
                    path.unlink(missing_ok=True)
            except FileNotFoundError:
                pass
    except Exception:  # the row is gone; a stray blob is harmless
        log.exception("blob clean-up after delete failed")
