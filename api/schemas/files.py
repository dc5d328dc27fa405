"""Public models of the files API (docs/api.md#the-file-object).

`FilePublic` is read straight off the table row with
`FilePublic.model_validate(row, from_attributes=True)`: the `meta` attribute (column
`metadata`) answers as `metadata`, and datetimes are UTC (SQLite hands back naive ones).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

FileStatusName = Literal["uploaded", "processing", "ready", "failed"]


def _utc(ts: datetime) -> datetime:
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]


class FilePublic(BaseModel):
    """The File object. `token_count`, `processed_token_count` and `truncation` are null
    until the file is ready; `error` says why a failed file failed."""

    model_config = ConfigDict(from_attributes=True)

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
    metadata: Annotated[dict[str, Any], BeforeValidator(lambda v: v or {})] = Field(
        validation_alias="meta"
    )
    cache_hit: bool
    error: str | None
    conversation_id: str | None
    project_id: str | None
    created_at: UtcDatetime
    updated_at: UtcDatetime


class FileList(BaseModel):
    data: list[FilePublic]
    next_cursor: str | None
