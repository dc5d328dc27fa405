"""Many new workspace files at once (docs/workspaces.md#large-tool-results): the tool results a
context answer names by path, a batch import's large results.

`put_new_files` does for a batch what `entries.put_entry` does for one PUT — every file
is a workspace entry and a File (`uploaded`, processed by the same `files` queue), the
quota is checked exactly under the owner's lock, the bytes are in the blob store and at
their path — at a fraction of the cost per file:

- the bytes are written to their temp files and blobs before the transaction (flushed,
  and fsynced under the blob policy, in one pass);
- one write transaction per `CHUNK` files: one ownership check, one lookup of the
  entries already there, one quota check for the whole chunk, one INSERT of the Files
  and one of the entries (the rows are built from column values, not ORM objects);
- the `process_file` messages are published after the commit by a background thread
  (`publish_later`), off the caller's path: a Celery publish costs about 1 ms, as much
  as the rest of a file's write. The rows are the source of truth: should the process
  stop before it publishes, the recovery sweep enqueues the `uploaded` rows after
  RECOVERY_UPLOADED_GRACE_S, as for any lost message.

A path that already has an entry is left as it is (its staged bytes are dropped): the
callers write what is missing, never replace. The file is readable at its path
(`GET …/workspace/{path}` answers 200) once `put_new_files` returns.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlmodel import Session

from contextq.settings import Settings
from contextq.workspace import StagedFile
from service import enqueue, quotas
from service.background_writer import BackgroundWriter
from service.workspaces.entries import EntryView
from service.workspaces.locate import owned_conversation, tree_for
from store import workspace_queries as wq
from store.blobs import BlobWriter, get_blob_store
from store.db import session_scope
from store.tables import File, FileStatus, new_id, utcnow
from store.workspace_tables import WorkspaceEntry

CHUNK = 256  # files per transaction: each staged file holds two descriptors until then


@dataclass(frozen=True, slots=True)
class NewFile:
    relative: str  # a normalised workspace path
    data: bytes


@dataclass(slots=True)
class _Staged:
    new: NewFile
    file: StagedFile
    blob: BlobWriter


def put_new_files(
    *, settings: Settings, owner_id: str, conversation_id: str, files: Sequence[NewFile]
) -> list[EntryView]:
    """Write each of `files` whose path has no entry yet (workspace file, blob, File,
    entry), `CHUNK` files per transaction. Returns the entries written. Raises what a PUT
    raises (QuotaExceeded, NotFound, ValidationFailed, OSError): the chunk that failed
    left nothing behind, the chunks before it are written."""
    written: list[EntryView] = []
    for start in range(0, len(files), CHUNK):
        written += _put_chunk(settings, owner_id, conversation_id, files[start : start + CHUNK])
    return written


def _put_chunk(
    settings: Settings, owner_id: str, conversation_id: str, files: Sequence[NewFile]
) -> list[EntryView]:
    tree = tree_for(settings, owner_id, conversation_id)
    store = get_blob_store(settings)
    staged: list[_Staged] = []
    try:
        for new in files:
            item = _Staged(new, tree.stage(new.relative), store.writer())
            staged.append(item)
            item.file.write(new.data)
            item.blob.write(new.data)
        for item in staged:  # the fsync pass (when the policy asks), before the lock
            item.file.finish()
        with session_scope() as session:
            return _insert(session, settings, owner_id, conversation_id, staged)
    finally:
        for item in staged:  # no-ops for what was committed and published
            item.blob.abort()
            item.file.abort()


def _insert(
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    staged: list[_Staged],
) -> list[EntryView]:
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id, for_update=True)
    present = wq.entries_at(
        session, conversation_id=conversation_id, paths=[s.new.relative for s in staged]
    )
    new = [s for s in staged if s.new.relative not in present]
    if not new:
        return []
    quotas.enforce(  # exact, under the owner's lock; the blobs are still temp files
        session,
        settings,
        owner_id=owner_id,
        new_bytes=sum(len(s.new.data) for s in new),
        new_files=len(new),
        lock=True,
    )
    templates = _templates(owner_id, conversation_id, settings)
    files: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    for item in new:
        file_row, entry_row = _rows(item, *templates)
        files.append(file_row)
        entries.append(entry_row)
    wq.insert_files_and_entries(session, files=files, entries=entries)
    for item in new:
        item.file.publish()  # last: a failure before it leaves no path without its rows
    ids = [f["id"] for f in files]
    enqueue.after_commit(session, publish_later, ids, settings=settings)
    return [_view(e) for e in entries]


def _view(entry: dict[str, Any]) -> EntryView:
    return EntryView(
        entry["path"],
        entry["size_bytes"],
        entry["sha256"],
        entry["file_id"],
        FileStatus.UPLOADED,
        entry["updated_at"],
    )


def _rows(
    item: _Staged, file_template: dict[str, Any], entry_template: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The File and entry rows of one staged file, its blob committed."""
    sha256, size = item.blob.commit()
    name = item.new.relative.rsplit("/", 1)[-1]
    file_id = new_id()
    media_type = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
    file_row = {
        **file_template,
        "id": file_id,
        "filename": name,
        "size_bytes": size,
        "sha256": sha256,
        "media_type": media_type,
    }
    entry_row = {
        **entry_template,
        "id": new_id(),
        "path": item.new.relative,
        "file_id": file_id,
        "size_bytes": size,
        "sha256": sha256,
    }
    return file_row, entry_row


def _templates(
    owner_id: str, conversation_id: str, settings: Settings
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The column values every new File and entry of a batch shares, from one model
    instance each (so the models' defaults hold)."""
    now = utcnow()
    file = File(
        owner_id=owner_id,
        filename="-",
        size_bytes=0,
        sha256="-",
        conversation_id=conversation_id,
        created_at=now,
        updated_at=now,
        # if the message is lost, the recovery sweep takes the row after the grace
        recover_after=now + timedelta(seconds=settings.RECOVERY_UPLOADED_GRACE_S),
    )
    entry = WorkspaceEntry(
        owner_id=owner_id,
        conversation_id=conversation_id,
        path="-",
        size_bytes=0,
        sha256="-",
        created_at=now,
        updated_at=now,
    )
    file_values = {
        c.name: getattr(file, "meta" if c.name == "metadata" else c.name)
        for c in File.__table__.columns  # type: ignore[attr-defined]
    }
    entry_values = {c.name: getattr(entry, c.name) for c in WorkspaceEntry.__table__.columns}  # type: ignore[attr-defined]
    return file_values, entry_values


def _publish(_batch: object, value: tuple[list[str], Settings]) -> None:
    ids, settings = value
    for file_id in ids:
        enqueue.now_or_log(enqueue.process_file, file_id, settings=settings)


_publisher = BackgroundWriter(_publish, name="workspace-publisher")


def publish_later(ids: list[str], *, settings: Settings) -> None:
    """Publish `process_file` for each of `ids` from the background thread (in order)."""
    _publisher.submit(new_id(), (ids, settings))


def flush_publishes(timeout: float = 5.0) -> bool:
    """Wait until every message handed to `publish_later` is published (tests)."""
    return _publisher.flush(timeout)
