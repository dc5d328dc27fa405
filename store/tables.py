"""SQLModel tables of the spine: owners, API keys, files, jobs, the conversion cache.

History tables (conversations, messages, compactions, memory) live in
`store/history_tables.py`. Ids are random UUID hex strings; timestamps are UTC.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, Index, Text
from sqlmodel import Field, SQLModel


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


def _ts(**kw: Any) -> Any:
    return Field(default_factory=utcnow, sa_column_kwargs={}, sa_type=DateTime(timezone=True), **kw)


class Owner(SQLModel, table=True):
    __tablename__ = "owners"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    name: str = Field(max_length=200, unique=True, index=True)
    created_at: datetime = _ts()


class ApiKey(SQLModel, table=True):
    """Only a SHA-256 hash of each key is stored; `prefix` is shown to identify it."""

    __tablename__ = "api_keys"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="owners.id", index=True, max_length=32)
    key_hash: str = Field(max_length=64, unique=True, index=True)
    prefix: str = Field(max_length=16)
    created_at: datetime = _ts()
    revoked_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    # coarse: written at most once a minute per key (`store.keys.note_used`), never per request
    last_used_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))


class FileStatus:
    UPLOADED = "uploaded"
    PROCESSING = "processing"
    READY = "ready"
    FAILED = "failed"


class File(SQLModel, table=True):
    __tablename__ = "files"
    __table_args__ = (
        Index("ix_files_status_updated", "status", "updated_at"),
        # the storage quota sums an owner's sizes from the index alone
        Index("ix_files_owner_size", "owner_id", "size_bytes"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="owners.id", index=True, max_length=32)
    filename: str = Field(max_length=255)  # display only; nothing on disk is named after it
    size_bytes: int = Field(sa_type=BigInteger)
    sha256: str = Field(max_length=64, index=True)  # also the blob key of the upload
    media_type: str = Field(default="application/octet-stream", max_length=255)
    file_type: str = Field(default="unknown", max_length=32)
    category: str = Field(default="unsupported", max_length=16)
    status: str = Field(default=FileStatus.UPLOADED, max_length=16, index=True)
    attempts: int = 0
    token_count: int | None = None
    processed_token_count: int | None = None
    truncation: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column("metadata", JSON))
    cache_hit: bool = False
    error: str | None = Field(default=None, sa_column=Column(Text))
    # the artefact GET /content serves: a blob for binary artefacts (resized image,
    # subsampled audio); None for text results, whose text is in `file_contents`
    content_sha256: str | None = Field(default=None, max_length=64, index=True)
    content_media_type: str | None = Field(default=None, max_length=255)
    # who holds the `processing` claim: "<host>:<pid>:<process start>"; lets a redelivered
    # message take over at once when that process is dead (same host), else after the lease
    lease_owner: str | None = Field(default=None, max_length=255)
    conversation_id: str | None = Field(default=None, index=True, max_length=64)
    project_id: str | None = Field(default=None, index=True, max_length=64)
    created_at: datetime = _ts()
    updated_at: datetime = _ts()
    started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    # recovery sweep: an `uploaded` row is re-enqueued once `recover_after` has passed;
    # each re-enqueue doubles the wait (a long queue backlog is not flooded with copies)
    recover_after: datetime | None = Field(
        default=None, sa_type=DateTime(timezone=True), index=True
    )
    enqueues: int = 0


class FileContent(SQLModel, table=True):
    """The processed text of a ready file: what goes into context (already cut to
    MAX_TOTAL_OUTPUT / MAX_TOKENS_PER_FILE, so small). For images and audio it is the
    short description next to the binary artefact. Kept out of `files` so listing files
    never loads it; written in the same transaction as the file's result."""

    __tablename__ = "file_contents"

    file_id: str = Field(
        primary_key=True, max_length=32, foreign_key="files.id", ondelete="CASCADE"
    )
    text: str = Field(sa_column=Column(Text, nullable=False))


class JobStatus:
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Job(SQLModel, table=True):
    """A unit of background work the API can report on (compaction, …)."""

    __tablename__ = "jobs"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="owners.id", index=True, max_length=32)
    kind: str = Field(max_length=64)
    target_id: str | None = Field(default=None, index=True, max_length=64)
    status: str = Field(default=JobStatus.QUEUED, max_length=16, index=True)
    result: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    error: str | None = Field(default=None, sa_column=Column(Text))
    attempts: int = 0
    created_at: datetime = _ts()
    started_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))


class ConversionCacheEntry(SQLModel, table=True):
    """Converted markdown, keyed by sha256(bytes) + converter version + options.

    Shared across owners and workers; the markdown itself is a blob.
    """

    __tablename__ = "conversion_cache"

    key: str = Field(primary_key=True, max_length=128)
    markdown_sha256: str = Field(max_length=64, index=True)  # the blob sweep looks it up
    size_chars: int = 0
    hits: int = 0
    created_at: datetime = _ts()
    last_hit_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
