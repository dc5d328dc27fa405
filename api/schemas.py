"""Public models of the API (SPEC §2)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from store.tables import File

FileStatusName = Literal["uploaded", "processing", "ready", "failed"]


def _utc(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


class FilePublic(BaseModel):
    """The File object. `token_count`, `processed_token_count` and `truncation` are null
    until the file is ready; `error` says why a failed file failed."""

    id: str
    filename: str = Field(
        description="display only: path components and control characters removed"
    )
    size_bytes: int
    sha256: str
    media_type: str
    file_type: str
    category: str
    status: FileStatusName
    token_count: int | None
    processed_token_count: int | None
    truncation: dict[str, Any] | None
    metadata: dict[str, Any]
    cache_hit: bool
    error: str | None
    conversation_id: str | None
    project_id: str | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: File) -> FilePublic:
        return cls(
            id=row.id,
            filename=row.filename,
            size_bytes=row.size_bytes,
            sha256=row.sha256,
            media_type=row.media_type,
            file_type=row.file_type,
            category=row.category,
            status=row.status,  # type: ignore[arg-type]
            token_count=row.token_count,
            processed_token_count=row.processed_token_count,
            truncation=row.truncation,
            metadata=row.meta or {},
            cache_hit=row.cache_hit,
            error=row.error,
            conversation_id=row.conversation_id,
            project_id=row.project_id,
            created_at=_utc(row.created_at),
            updated_at=_utc(row.updated_at),
        )


class FileList(BaseModel):
    data: list[FilePublic]
    next_cursor: str | None


class Health(BaseModel):
    database: str
    broker: str
