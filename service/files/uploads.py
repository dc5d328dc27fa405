"""The owner-facing use cases of files (docs/api.md#the-file-object): accept an upload, read one,
its processed content, a page of them, delete one.

Phase one of the upload happens in `accept_upload`: the streamed blob is committed
(fsync + rename under its content hash), the row is inserted as `uploaded`, and
`process_file(file_id)` is sent only once that transaction commits
(`service.enqueue.after_commit`). If the publish fails the row stays `uploaded` for
the recovery sweep and the client still gets its 202.
"""

from __future__ import annotations

import logging
import mimetypes
import time
import unicodedata
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, event
from sqlmodel import Session, col

from contextq.errors import Conflict, Gone, NotFound, ValidationFailed
from contextq.settings import Settings
from service import enqueue, quotas
from service.files.processing import TEXT_MEDIA_TYPE
from store import files_queries as q
from store import projects_queries as pq
from store.blobs import BlobMissing, BlobReader, BlobWriter, get_blob_store
from store.chunks_queries import release_file_chunks
from store.context_queries import owned_conversation_exists
from store.tables import File, FileContent, FileStatus, utcnow

log = logging.getLogger("contextq.files")

NOT_FOUND = "file not found"
PROJECT_NOT_FOUND = "project not found"  # a missing and another owner's alike
FINAL_STATUSES = (FileStatus.READY, FileStatus.FAILED)
TAG_MAX_CHARS = 64
# a blob written this recently is kept on delete: an upload of the same bytes may be
# about to commit its row
BLOB_DELETE_GRACE_S = 60.0


def _tag(name: str, raw: str | None) -> str | None:
    """An optional `conversation_id` / `project_id` form field: printable, ≤ 64 chars."""
    value = (raw or "").strip()
    if not value:
        return None
    if len(value) > TAG_MAX_CHARS or any(
        unicodedata.category(c)[0] in "CZ" and c != " " for c in value
    ):
        raise ValidationFailed(f"`{name}` must be at most {TAG_MAX_CHARS} printable characters")
    return value


def check_upload_quota(
    *, session: Session, settings: Settings, owner_id: str, file_bytes_at_least: int = 0
) -> None:
    """Before the body is read: refuse at once an upload that cannot fit (the count is
    full, or the declared size alone goes over). `accept_upload` checks again, exactly."""
    quotas.enforce(session, settings, owner_id=owner_id, new_bytes=file_bytes_at_least, lock=False)


def check_upload_targets(
    session: Session, owner_id: str, conversation_id: str | None, project_id: str | None
) -> None:
    """An upload's `conversation_id` / `project_id` must name the owner's own (docs/api.md#routes):
    NotFound otherwise, exactly as for a missing one."""
    if conversation_id and not owned_conversation_exists(session, owner_id, conversation_id):
        raise NotFound(f"conversation {conversation_id!r} not found (conversation_id)")
    if project_id and pq.get_owned(session, owner_id=owner_id, project_id=project_id) is None:
        raise NotFound(PROJECT_NOT_FOUND)


def accept_upload(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    blob: BlobWriter,
    filename: str,
    conversation_id: str | None = None,
    project_id: str | None = None,
    replacing_bytes: int | None = None,
) -> File:
    """Commit the received blob, insert its row as `uploaded` and send `process_file`
    after the commit. `filename` is the display name, already sanitised by the receiver;
    the caller aborts `blob` if this raises (a no-op once committed): an upload over a
    quota is refused before its blob leaves the temp directory, so nothing is stored.
    `replacing_bytes`: the size of a File this one replaces (deleted by the caller in the
    same transaction), which the quota check counts as freed."""
    conversation_id = _tag("conversation_id", conversation_id)
    project_id = _tag("project_id", project_id)
    check_upload_targets(session, owner_id, conversation_id, project_id)
    replacing = replacing_bytes is not None
    quotas.enforce(  # exact, under the owner's lock; the blob is still a temp file
        session,
        settings,
        owner_id=owner_id,
        new_bytes=blob.size,
        freed_bytes=replacing_bytes or 0,
        freed_files=int(replacing),
        lock=True,
    )
    sha256, size = blob.commit()  # fsync + rename, before the transaction takes the lock
    now = utcnow()
    row = File(
        owner_id=owner_id,
        filename=filename,
        size_bytes=size,
        sha256=sha256,
        media_type=mimetypes.guess_type(filename, strict=False)[0] or "application/octet-stream",
        conversation_id=conversation_id,
        project_id=project_id,
        created_at=now,
        updated_at=now,
        # if the message is lost, the recovery sweep takes the row after the grace
        recover_after=now + timedelta(seconds=settings.RECOVERY_UPLOADED_GRACE_S),
    )
    q.insert_file(session, row=row)
    enqueue.after_commit(session, enqueue.process_file, row.id, settings=settings)
    return row


def get_file(*, session: Session, owner_id: str, file_id: str) -> File:
    """The owner's file row; another owner's file is exactly as missing as no file."""
    row = q.get_owned(session, owner_id=owner_id, file_id=file_id)
    if row is None:
        raise NotFound(NOT_FOUND)
    return row


def is_final(row: File) -> bool:
    """Processing has ended (`ready` or `failed`): a long poll answers at once."""
    return row.status in FINAL_STATUSES


@dataclass(frozen=True)
class FileArtefact:
    """What GET /content serves: the processed text, or a stored binary artefact opened
    for streaming (the caller closes it)."""

    media_type: str
    text: str | None = None
    blob: BlobReader | None = None


def file_content(
    *, session: Session, settings: Settings, owner_id: str, file_id: str
) -> FileArtefact:
    """The processed artefact of a ready file. Conflict while it is not ready or when it
    failed; Gone when its stored artefact has disappeared."""
    row = get_file(session=session, owner_id=owner_id, file_id=file_id)
    if row.status == FileStatus.FAILED:
        raise Conflict(f"the file failed to process: {row.error}")
    if row.status != FileStatus.READY:
        raise Conflict(
            f"the file is not ready yet (status: {row.status}); poll "
            f"GET /v1/files/{row.id} until it is ready"
        )
    if not row.content_sha256:  # a text result
        text = q.file_text(session, file_id=row.id) or ""
        return FileArtefact(TEXT_MEDIA_TYPE, text=text)
    try:
        blob = get_blob_store(settings).open(row.content_sha256)
    except BlobMissing:
        raise Gone("the processed content is missing from storage; upload the file again") from None
    return FileArtefact(row.content_media_type or "application/octet-stream", blob=blob)


def list_files(
    *,
    session: Session,
    owner_id: str,
    limit: int,
    status: str | None = None,
    conversation_id: str | None = None,
    project_id: str | None = None,
    cursor: str | None = None,
) -> tuple[list[File], str | None]:
    """A page of the owner's files, newest first, and the cursor of the next page."""
    after = None
    if cursor:
        try:
            after = q.decode_cursor(cursor)
        except ValueError:
            raise ValidationFailed(
                "invalid cursor: pass next_cursor from the previous page"
            ) from None
    return q.list_owned(
        session,
        owner_id=owner_id,
        limit=limit,
        status=status,
        conversation_id=conversation_id,
        project_id=project_id,
        after=after,
    )


def delete_file(*, session: Session, settings: Settings, owner_id: str, file_id: str) -> None:
    """Delete the row, its processed text and its search chunks (unless another file has
    the same bytes); once that commits, remove the blobs no row points at any more."""
    row = get_file(session=session, owner_id=owner_id, file_id=file_id)
    delete_rows(session=session, settings=settings, rows=[row])


def delete_rows(*, session: Session, settings: Settings, rows: list[File]) -> None:
    """Delete these file rows as `delete_file` does (a project's files go this way too)."""
    shas: set[str] = set()
    for row in rows:
        shas.update(s for s in (row.sha256, row.content_sha256) if s)
        session.execute(delete(FileContent).where(col(FileContent.file_id) == row.id))
        release_file_chunks(session, file_id=row.id, content_sha256=row.sha256)
        session.delete(row)
        session.flush()  # the next row's chunk release must see this one gone
    orphans = [s for s in shas if not q.blob_referenced(session, sha256=s)]
    if orphans:
        event.listen(
            session, "after_commit", lambda _s: _remove_blobs(orphans, settings), once=True
        )


def _remove_blobs(shas: list[str], settings: Settings) -> None:
    """Best effort, after the commit: the row is gone; a stray blob is harmless (the
    storage sweep takes it later). A blob pinned by an upload in the last minute is
    kept (`BlobStore.delete_if_unused`)."""
    try:
        blobs = get_blob_store(settings)
        cutoff = time.time() - BLOB_DELETE_GRACE_S
        for sha in shas:
            blobs.delete_if_unused(sha, older_than=cutoff)
    except Exception:
        log.exception("blob clean-up after delete failed")
