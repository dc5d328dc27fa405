"""The private-data checkpoint of a conversation
(docs/workspaces.md#private-data-conversation-and-memory-checkpoints).

`DATA_DIR/workspaces/_private-data/<owner_id>/<conversation_id>.json` holds
`{"conversation": {id, title, model, created_at, …}, "memory": <seed 001's save_state>}`
(the engine's `memory_checkpoint`), never under the mountable tree
`DATA_DIR/workspaces/<owner_id>/`. `POST …/memory/import` takes it back.

- `write_checkpoint(*, settings, owner_id, conversation, memory)` is the ONE writer:
  the document to a temp file in the same directory, then an atomic rename (readers see
  the old file or the new one, never half of one); fsync as `BLOB_FSYNC` says.
- `checkpoint_after_commit(session, …)`: a use case that changed a conversation or its
  memory calls it; once the transaction commits, the process's background writer
  (`service.background_writer`, off the request path; changes to one conversation
  still waiting coalesce into one write) rewrites the checkpoint from what is then
  committed (re-read under a per-owner file lock, so the newest state is what stays,
  whatever order commits and writes happen in), or removes it when the conversation is
  gone. A rolled-back transaction writes nothing. A failed write is logged, never
  raised: the database is the source of truth and the next change rewrites the file.
  `flush_checkpoints()` waits for the writes under way.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import event
from sqlalchemy.orm import Session

from contextq.history import HierarchicalMemory
from contextq.history.memory import memory_checkpoint
from contextq.settings import Settings
from service.background_writer import BackgroundWriter
from service.history.stored_memory import load_memory
from store import history_queries as q
from store.db import read_session
from store.history_tables import Conversation

log = logging.getLogger("contextq.checkpoint")

PRIVATE_DATA = "_private-data"
_PENDING = "contextq.checkpoints"
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# the conversation's own fields; running totals and updated_at move with every message
_NOT_IN_CHECKPOINT = frozenset(
    {
        "owner_id",
        "message_count",
        "total_tokens",
        "last_seq",
        "pinned_count",
        "last_compacted_seq",
        "tokens_since_compaction",
        "updated_at",
    }
)


def private_data_dir(settings: Settings) -> Path:
    return settings.data_dir / "workspaces" / PRIVATE_DATA


def checkpoint_path(settings: Settings, *, owner_id: str, conversation_id: str) -> Path:
    for value in (owner_id, conversation_id):
        if not _ID.match(value):
            raise ValueError(f"not an id: {value!r}")
    return private_data_dir(settings) / owner_id / f"{conversation_id}.json"


def conversation_fields(conversation: Conversation | Mapping[str, Any]) -> dict[str, Any]:
    """The conversation part of a checkpoint: its own fields (id, title, model, …);
    times in UTC as the API gives them (SQLite hands them back without a zone)."""
    data = dict(conversation) if isinstance(conversation, Mapping) else conversation.model_dump()
    return {
        k: v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v
        for k, v in data.items()
        if k not in _NOT_IN_CHECKPOINT
    }


def write_checkpoint(
    *,
    settings: Settings,
    owner_id: str,
    conversation: Conversation | Mapping[str, Any],
    memory: HierarchicalMemory,
) -> Path:
    """Write the checkpoint of `conversation` atomically (mode 0600); returns its path."""
    fields = conversation_fields(conversation)
    path = checkpoint_path(settings, owner_id=owner_id, conversation_id=str(fields.get("id")))
    body = orjson.dumps(memory_checkpoint(fields, memory))
    _private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".checkpoint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
            if settings.blob_fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def remove_checkpoint(*, settings: Settings, owner_id: str, conversation_id: str) -> None:
    checkpoint_path(settings, owner_id=owner_id, conversation_id=conversation_id).unlink(
        missing_ok=True
    )


def checkpoint_after_commit(
    session: Session, *, settings: Settings, owner_id: str, conversation_id: str
) -> None:
    """Rewrite (or remove) the conversation's checkpoint once `session` commits."""
    pending: dict[str, tuple[Settings, str]] = session.info.setdefault(_PENDING, {})
    pending[conversation_id] = (settings, owner_id)


def refresh_checkpoint(*, settings: Settings, owner_id: str, conversation_id: str) -> None:
    """The checkpoint from the committed rows: written, or removed if the conversation
    is gone."""
    owner_dir = private_data_dir(settings) / owner_id
    with _owner_lock(owner_dir), read_session() as session:
        conversation = q.get_conversation(
            session, owner_id=owner_id, conversation_id=conversation_id
        )
        if conversation is None:
            remove_checkpoint(settings=settings, owner_id=owner_id, conversation_id=conversation_id)
            return
        memory = load_memory(
            session, conversation_id=conversation_id, settings=settings, conversation=conversation
        )
        write_checkpoint(
            settings=settings, owner_id=owner_id, conversation=conversation, memory=memory
        )


def _private_dir(owner_dir: Path) -> None:
    """The owner's directory and `_private-data` above it, both 0700 (nobody else lists
    owners or conversations)."""
    if owner_dir.is_dir():
        return
    owner_dir.parent.parent.mkdir(parents=True, exist_ok=True)  # DATA_DIR/workspaces
    for directory in (owner_dir.parent, owner_dir):
        directory.mkdir(mode=0o700, exist_ok=True)
        os.chmod(directory, 0o700)  # whatever the umask


@contextlib.contextmanager
def _owner_lock(owner_dir: Path) -> Iterator[None]:
    """An exclusive lock on the owner's private-data directory (all processes)."""
    _private_dir(owner_dir)
    fd = os.open(owner_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _refresh(key: tuple[str, str], settings: Settings) -> None:
    owner_id, conversation_id = key
    try:
        refresh_checkpoint(settings=settings, owner_id=owner_id, conversation_id=conversation_id)
    except Exception:
        log.exception("could not write the checkpoint of conversation %s", conversation_id)


_writer = BackgroundWriter(_refresh, name="checkpoint-writer")


def flush_checkpoints(timeout: float = 5.0) -> bool:
    """Wait until the checkpoints of committed changes are written (False on timeout)."""
    return _writer.flush(timeout)


@event.listens_for(Session, "after_commit")
def _write_pending(session: Session) -> None:
    pending = session.info.pop(_PENDING, None)
    for conversation_id, (settings, owner_id) in (pending or {}).items():
        _writer.submit((owner_id, conversation_id), settings)


@event.listens_for(Session, "after_rollback")
def _drop_pending(session: Session) -> None:
    session.info.pop(_PENDING, None)
