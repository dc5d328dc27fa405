"""Queries over `workspace_entries` (keyword-only helpers; no domain rules)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, insert
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from store.tables import File
from store.workspace_tables import WorkspaceEntry

E = WorkspaceEntry


def get_entry(session: Session, *, conversation_id: str, path: str) -> WorkspaceEntry | None:
    stmt = select(E).where(col(E.conversation_id) == conversation_id, col(E.path) == path)
    return session.exec(stmt).first()


def file_status(session: Session, *, file_id: str | None) -> str | None:
    if file_id is None:
        return None
    return session.exec(select(col(File.status)).where(col(File.id) == file_id)).first()


def list_entries(
    session: Session, *, conversation_id: str, prefix: str, after: str | None, limit: int
) -> list[tuple[WorkspaceEntry, str | None]]:
    """Entries whose path starts with `prefix` (exactly, case included), in path order
    after `after`, with their File's status (None when it was deleted)."""
    stmt = (
        sa_select(E, col(File.status))
        .outerjoin(File, col(File.id) == col(E.file_id))
        .where(col(E.conversation_id) == conversation_id)
    )
    if prefix:
        stmt = stmt.where(func.substr(col(E.path), 1, len(prefix)) == prefix)
    if after is not None:
        stmt = stmt.where(col(E.path) > after)
    stmt = stmt.order_by(col(E.path)).limit(limit)
    return [(row[0], row[1]) for row in session.execute(stmt)]


def has_entries_under(session: Session, *, conversation_id: str, directory: str) -> bool:
    """Whether any entry lies inside `directory` (a path naming a directory)."""
    inside = directory + "/"
    stmt = (
        select(col(E.id))
        .where(
            col(E.conversation_id) == conversation_id,
            func.substr(col(E.path), 1, len(inside)) == inside,
        )
        .limit(1)
    )
    return session.exec(stmt).first() is not None


def entries_of_conversation(session: Session, *, conversation_id: str) -> list[WorkspaceEntry]:
    return list(session.exec(select(E).where(col(E.conversation_id) == conversation_id)).all())


def delete_entries(session: Session, *, conversation_id: str) -> None:
    session.execute(delete(E).where(col(E.conversation_id) == conversation_id))


def orphaned_bytes(session: Session, *, owner_id: str) -> int:
    """Bytes of the owner's workspace files whose File was deleted (still on disk)."""
    total = session.execute(
        sa_select(func.coalesce(func.sum(col(E.size_bytes)), 0)).where(
            col(E.owner_id) == owner_id, col(E.file_id).is_(None)
        )
    ).scalar_one()
    return int(total)


def entries_at(
    session: Session, *, conversation_id: str, paths: list[str]
) -> dict[str, tuple[int, str | None, str | None]]:
    """path → (size_bytes, file id, the File's status) for the entries at `paths`."""
    if not paths:
        return {}
    stmt = (
        sa_select(col(E.path), col(E.size_bytes), col(E.file_id), col(File.status))
        .outerjoin(File, col(File.id) == col(E.file_id))
        .where(col(E.conversation_id) == conversation_id, col(E.path).in_(sorted(set(paths))))
    )
    return {path: (int(size), fid, status) for path, size, fid, status in session.execute(stmt)}


def insert_files_and_entries(
    session: Session, *, files: list[dict[str, Any]], entries: list[dict[str, Any]]
) -> None:
    """INSERT many new File rows and workspace entries (column name → value; Core,
    one statement each)."""
    if files:
        session.execute(insert(File.__table__), files)  # type: ignore[attr-defined]
    if entries:
        session.execute(insert(E.__table__), entries)  # type: ignore[attr-defined]
