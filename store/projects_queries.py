"""Keyword-only queries over projects and their files (docs/projects.md).

Which owner may see what, and what a missing project means, is decided in
`service.projects`; this module only runs the statements.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, and_, case, func, or_, select, update
from sqlmodel import Session, col

from store.files_queries import aware
from store.project_tables import ChunkSet, FileChunkSet, Project
from store.tables import File, FileContent, FileStatus, utcnow

FILES: Table = File.__table__  # type: ignore[attr-defined]


def get_owned(session: Session, *, owner_id: str, project_id: str) -> Project | None:
    row = session.get(Project, project_id) if 0 < len(project_id) <= 64 else None
    return row if row is not None and row.owner_id == owner_id else None


def encode_cursor(row: Project) -> str:
    raw = f"{aware(row.created_at).isoformat()}|{row.id}"  # type: ignore[union-attr]
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """Raises ValueError on anything that is not a cursor we made."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        ts, project_id = raw.split("|", 1)
        return datetime.fromisoformat(ts), project_id
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("invalid cursor") from exc


def list_owned(
    session: Session, *, owner_id: str, limit: int, after: tuple[datetime, str] | None = None
) -> tuple[list[Project], str | None]:
    """Newest first; returns (rows, next_cursor)."""
    stmt = select(Project).where(col(Project.owner_id) == owner_id)
    if after is not None:
        ts, last_id = after
        stmt = stmt.where(
            or_(
                col(Project.created_at) < ts,
                and_(col(Project.created_at) == ts, col(Project.id) < last_id),
            )
        )
    stmt = stmt.order_by(col(Project.created_at).desc(), col(Project.id).desc()).limit(limit + 1)
    rows = list(session.execute(stmt).scalars())
    next_cursor = encode_cursor(rows[limit - 1]) if len(rows) > limit else None
    return rows[:limit], next_cursor


@dataclass(frozen=True, slots=True)
class ProjectStats:
    file_count: int = 0
    ready_count: int = 0
    token_count: int = 0  # sum of the ready files' processed tokens
    chunk_count: int = 0  # chunks of the ready files (what search looks through)


def stats(
    session: Session, *, owner_id: str, project_ids: Sequence[str]
) -> dict[str, ProjectStats]:
    """The counts of each of these projects of the owner (two grouped queries)."""
    if not project_ids:
        return {}
    ready = col(File.status) == FileStatus.READY
    files = session.execute(
        select(
            col(File.project_id),
            func.count(),
            func.coalesce(func.sum(case((ready, 1), else_=0)), 0),
            func.coalesce(func.sum(case((ready, col(File.processed_token_count)), else_=0)), 0),
        )
        .where(col(File.owner_id) == owner_id, col(File.project_id).in_(project_ids))
        .group_by(col(File.project_id))
    ).all()
    chunks = dict(
        session.execute(
            select(col(File.project_id), func.coalesce(func.sum(col(ChunkSet.chunk_count)), 0))
            .select_from(File)
            .join(FileChunkSet, col(FileChunkSet.file_id) == col(File.id))
            .join(ChunkSet, col(ChunkSet.id) == col(FileChunkSet.chunk_set_id))
            .where(col(File.owner_id) == owner_id, col(File.project_id).in_(project_ids), ready)
            .group_by(col(File.project_id))
        ).all()
    )
    out = {pid: ProjectStats() for pid in project_ids}
    for project_id, n, n_ready, n_tokens in files:
        out[project_id] = ProjectStats(
            int(n), int(n_ready), int(n_tokens), int(chunks.get(project_id, 0))
        )
    return out


def project_files(session: Session, *, owner_id: str, project_id: str) -> list[File]:
    """Every file of the owner's project, oldest first."""
    stmt = (
        select(File)
        .where(col(File.owner_id) == owner_id, col(File.project_id) == project_id)
        .order_by(col(File.created_at), col(File.id))
    )
    return list(session.execute(stmt).scalars())


def file_texts(session: Session, *, file_ids: Sequence[str]) -> dict[str, str]:
    """The processed texts of these files (what goes into context)."""
    if not file_ids:
        return {}
    stmt = select(col(FileContent.file_id), col(FileContent.text)).where(
        col(FileContent.file_id).in_(file_ids)
    )
    return dict(session.execute(stmt).all())


def chunk_counts(session: Session, *, file_ids: Sequence[str]) -> dict[str, int]:
    """How many chunks each of these files' chunk set holds."""
    if not file_ids:
        return {}
    stmt = (
        select(col(FileChunkSet.file_id), col(ChunkSet.chunk_count))
        .join(ChunkSet, col(ChunkSet.id) == col(FileChunkSet.chunk_set_id))
        .where(col(FileChunkSet.file_id).in_(file_ids))
    )
    return {file_id: int(n) for file_id, n in session.execute(stmt).all()}


def set_file_project(session: Session, *, file_id: str, project_id: str | None) -> str | None:
    """Move a file into (or out of) a project; returns the file's status as this statement
    saw it (after any concurrent result write committed), or None if the row is gone."""
    now = utcnow()
    row = session.connection().execute(
        update(FILES)
        .where(FILES.c.id == file_id)
        .values(project_id=project_id, updated_at=now)
        .returning(FILES.c.status)
    )
    status: Any = row.scalar_one_or_none()
    return None if status is None else str(status)


def set_index_meta(session: Session, *, file_id: str, index: dict[str, Any]) -> bool:
    """Record `metadata.index` of a ready file (indexed after its result was written).
    False when the row is gone or no longer ready."""
    row = session.get(File, file_id, with_for_update=True)
    if row is None or row.status != FileStatus.READY:
        return False
    row.meta = {**(row.meta or {}), "index": index}
    row.updated_at = utcnow()
    session.flush()
    return True
