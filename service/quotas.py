"""Per-owner quotas (docs/operations.md#running-the-service, OWASP API4): the one place that decides
whether one more file, or so many more bytes, fits.

`MAX_FILES_PER_OWNER` counts the owner's Files (uploads and workspace files alike);
`MAX_STORAGE_BYTES_PER_OWNER` counts their bytes, plus workspace files whose File was
deleted (their bytes are still on disk). A write that replaces something (a workspace file
written again) passes what it frees. The request rate per key lives in `api/deps.py`.
"""

from __future__ import annotations

from sqlmodel import Session

from contextq.errors import QuotaExceeded
from contextq.settings import Settings
from store import files_queries, workspace_queries


def enabled(settings: Settings) -> bool:
    return bool(settings.MAX_FILES_PER_OWNER or settings.MAX_STORAGE_BYTES_PER_OWNER)


def enforce(
    session: Session,
    settings: Settings,
    *,
    owner_id: str,
    new_bytes: int,
    new_files: int = 1,
    freed_bytes: int = 0,
    freed_files: int = 0,
    lock: bool,
) -> None:
    """QuotaExceeded (429) naming the limit when the write would put the owner over one.
    With `lock`, the owner's row is locked first so two writes of one owner check in
    turn (exact); without it the check is a cheap early refusal before a body is read."""
    if not enabled(settings):
        return
    files, used = files_queries.owner_usage(session, owner_id=owner_id, lock=lock)
    used += workspace_queries.orphaned_bytes(session, owner_id=owner_id)
    max_files, max_bytes = settings.MAX_FILES_PER_OWNER, settings.MAX_STORAGE_BYTES_PER_OWNER
    if max_files and new_files and files - freed_files + new_files > max_files:
        raise QuotaExceeded(
            f"MAX_FILES_PER_OWNER reached: this owner has {files} files (the limit is "
            f"{max_files}); delete files to upload more",
            limit="MAX_FILES_PER_OWNER",
        )
    adding = max(new_bytes - freed_bytes, 0)
    if max_bytes and used + adding > max_bytes:
        raise QuotaExceeded(
            f"MAX_STORAGE_BYTES_PER_OWNER would be exceeded: {used} of {max_bytes} bytes are "
            f"used and this write adds {adding} bytes; delete files or workspace files to free "
            "space",
            limit="MAX_STORAGE_BYTES_PER_OWNER",
        )
