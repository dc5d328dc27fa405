"""Public models of the workspace routes (docs/workspaces.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from api.schemas.files import FileStatusName, UtcDatetime


class WorkspaceEntryPublic(BaseModel):
    """A file in a conversation's workspace. `path` is relative to the workspace (the
    sandbox sees it at `/workspace/<path>`); `file_id` is the File that processes it
    (null, and `status` null, once that File was deleted with DELETE /v1/files/{id})."""

    path: str
    size_bytes: int
    sha256: str
    file_id: str | None
    status: FileStatusName | None
    updated_at: UtcDatetime


class WorkspaceEntryList(BaseModel):
    data: list[WorkspaceEntryPublic]
    next_cursor: str | None


class WorkspacePortion(BaseModel):
    """Which part of the file `text` holds: `unit` items from `offset` (0-based);
    `next_offset` is where the next portion starts (null at the end of the file)."""

    unit: Literal["lines", "rows", "pages"]
    offset: int
    returned: int
    next_offset: int | None
    total: int | None = Field(description="lines, data rows or pages of the whole file, if known")
    sheet: str | None = None


class WorkspaceProcessedView(BaseModel):
    """`?view=processed`: the File's processed text and truncation; with `offset` /
    `limit`, a portion of the whole file (`portion` says which)."""

    path: str
    file_id: str | None
    status: FileStatusName | None
    category: str | None
    file_type: str | None
    text: str
    token_count: int | None
    processed_token_count: int | None
    truncation: dict[str, Any] | None
    portion: WorkspacePortion | None = None
