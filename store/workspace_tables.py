"""The workspace entries table (docs/workspaces.md): one row per file in a conversation's workspace.

The bytes live in the workspace directory (what a sandbox mounts); the row says which
path holds which bytes (size, sha256) and which File processes them. `file_id` is set
to NULL when that File is deleted through `DELETE /v1/files/{id}`: the workspace file
stays, readable raw, with no processed view until it is written again.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, ForeignKey, Index, String, UniqueConstraint
from sqlmodel import Field, SQLModel

from store.tables import _ts, new_id

ID_LEN = 32
PATH_LEN = 1024  # contextq.workspace.paths.PATH_MAX_BYTES


class WorkspaceEntry(SQLModel, table=True):
    __tablename__ = "workspace_entries"
    __table_args__ = (
        UniqueConstraint("conversation_id", "path", name="uq_workspace_entries_conversation_path"),
        Index("ix_workspace_entries_owner_file", "owner_id", "file_id"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=ID_LEN)
    owner_id: str = Field(foreign_key="owners.id", max_length=ID_LEN)
    conversation_id: str = Field(
        sa_column=Column(
            String(ID_LEN), ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        )
    )
    path: str = Field(max_length=PATH_LEN)  # normalised, relative (`tool-results/x.json`)
    file_id: str | None = Field(
        default=None,
        sa_column=Column(
            String(ID_LEN), ForeignKey("files.id", ondelete="SET NULL"), nullable=True, index=True
        ),
    )
    size_bytes: int = Field(sa_type=BigInteger)
    sha256: str = Field(max_length=64)
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


__all__ = ["WorkspaceEntry"]
