"""Workspace files: write (PUT), list, read raw, delete (docs/workspaces.md).

A PUT is three steps so that nothing is read from the body before it can be refused,
and no disk work holds the database's write lock for long:

1. `prepare_put` (read transaction): the conversation is the owner's, the path is valid
   and not a directory, the declared size fits the quota; a temp file is staged in the
   target's directory (`WorkspaceTree.stage`).
2. the route streams the body into the temp file and into a blob (the bytes the worker
   processes), stopping at MAX_UPLOAD_BYTES.
3. `put_entry` (write transaction): the temp file is flushed first; then the quota is
   checked exactly, the File is created by `service.files.accept_upload` (processed by
   the same queue as uploads), the entry written, a replaced File deleted, and last the
   temp file renamed over the path (atomic: readers see the old bytes or the new).
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO

from sqlmodel import Session

from contextq.errors import Gone, ValidationFailed
from contextq.settings import Settings
from contextq.workspace import StagedFile, normalize_path
from service import files, quotas
from service.workspaces.locate import existing_entry, owned_conversation, tree_for
from store import workspace_queries as q
from store.blobs import BlobWriter
from store.tables import utcnow
from store.workspace_tables import WorkspaceEntry

MAX_LIST = 1000


@dataclass(frozen=True)
class EntryView:
    path: str
    size_bytes: int
    sha256: str
    file_id: str | None
    status: str | None  # the File's status; None once that File was deleted
    updated_at: datetime


@dataclass(frozen=True)
class PutTicket:
    """What `prepare_put` checked and staged; the route fills `staged` with the body."""

    relative: str
    staged: StagedFile


@dataclass(frozen=True)
class RawFile:
    fh: BinaryIO
    size: int
    media_type: str
    name: str


def _view(entry: WorkspaceEntry, status: str | None) -> EntryView:
    return EntryView(
        entry.path, entry.size_bytes, entry.sha256, entry.file_id, status, entry.updated_at
    )


def prepare_put(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    path: str,
    declared_bytes: int | None = None,
) -> PutTicket:
    """Refuse what can be refused before the body is read, then stage the temp file."""
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    relative = normalize_path(path)
    existing = q.get_entry(session, conversation_id=conversation_id, path=relative)
    if declared_bytes:
        quotas.enforce(
            session,
            settings,
            owner_id=owner_id,
            new_bytes=declared_bytes,
            new_files=0 if existing else 1,
            freed_bytes=existing.size_bytes if existing else 0,
            lock=False,
        )
    staged = tree_for(settings, owner_id, conversation_id).stage(relative)
    return PutTicket(relative, staged)


def put_entry(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    relative: str,
    blob: BlobWriter,
    staged: StagedFile,
) -> EntryView:
    """Write the entry and its File, then publish the staged bytes at `relative`. The
    caller aborts `blob` and `staged` if this raises (no-ops once committed/published)."""
    staged.finish()  # the temp file's fsync happens before the transaction takes its lock
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    entry = q.get_entry(session, conversation_id=conversation.id, path=relative)
    row = files.accept_upload(  # checks the quotas exactly, counting what this replaces
        session=session,
        settings=settings,
        owner_id=owner_id,
        blob=blob,
        filename=relative.rsplit("/", 1)[-1],
        conversation_id=conversation.id,
        replacing_bytes=entry.size_bytes if entry and entry.file_id else None,
    )
    replaced = entry.file_id if entry else None
    now = utcnow()
    if entry is None:
        entry = WorkspaceEntry(
            owner_id=owner_id,
            conversation_id=conversation.id,
            path=relative,
            size_bytes=row.size_bytes,
            sha256=row.sha256,
            created_at=now,
        )
    entry.file_id = row.id
    entry.size_bytes, entry.sha256, entry.updated_at = row.size_bytes, row.sha256, now
    session.add(entry)
    session.flush()
    if replaced is not None:
        files.delete_file(session=session, settings=settings, owner_id=owner_id, file_id=replaced)
    staged.publish()  # last: a failure before it leaves the old bytes and rows in place
    return _view(entry, row.status)


def encode_cursor(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode("utf-8")).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return base64.b64decode(padded, altchars=b"-_", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationFailed(
            "invalid cursor: pass next_cursor from the previous page", field="cursor"
        ) from None


def list_entries(
    *,
    session: Session,
    owner_id: str,
    conversation_id: str,
    prefix: str = "",
    limit: int = 100,
    cursor: str | None = None,
) -> tuple[list[EntryView], str | None]:
    """A page of the workspace's files whose path starts with `prefix` (`/workspace/…`
    accepted), in path order, and the cursor of the next page."""
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    wanted = normalize_path(prefix, allow_root=True)
    if wanted and prefix.endswith("/"):
        wanted += "/"
    after = decode_cursor(cursor) if cursor else None
    limit = max(1, min(limit, MAX_LIST))
    rows = q.list_entries(
        session, conversation_id=conversation_id, prefix=wanted, after=after, limit=limit + 1
    )
    page = [_view(entry, status) for entry, status in rows[:limit]]
    next_cursor = encode_cursor(page[-1].path) if len(rows) > limit else None
    return page, next_cursor


def open_raw(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str, path: str
) -> RawFile:
    """The workspace file's bytes, open for reading (the caller closes `fh`)."""
    entry, tree = existing_entry(
        session, settings, owner_id=owner_id, conversation_id=conversation_id, path=path
    )
    relative = entry.path
    try:
        fh = tree.open_file(relative)
    except FileNotFoundError:
        raise Gone(f"`{relative}` is missing from the workspace directory; PUT it again") from None
    name = relative.rsplit("/", 1)[-1]
    media_type = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
    size = fh.seek(0, 2)
    fh.seek(0)
    return RawFile(fh, size, media_type, name)


def delete_entry(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str, path: str
) -> None:
    """Delete the file at `path`, its entry and its File; a directory is refused (422)."""
    entry, tree = existing_entry(
        session,
        settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        path=path,
        for_update=True,
    )
    relative = entry.path
    if entry.file_id is not None:
        files.delete_file(
            session=session, settings=settings, owner_id=owner_id, file_id=entry.file_id
        )
    session.delete(entry)
    session.flush()
    tree.remove(relative)
