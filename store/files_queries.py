"""Keyword-only queries over the `files` table: claims, result writes, the recovery
sweep's reads and updates, and the API's reads.

Every state change is a conditional UPDATE guarded by the state it was read
in (status, attempts, …), so a duplicate delivery or two sweeps at once can
never double-claim or double-write a row: the loser's UPDATE matches 0 rows.
Which change to make (claim, take over, fail, release) is decided in
`service.files`; this module only runs the statements.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Row, Table, and_, func, insert, or_, update
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from store.tables import ConversionCacheEntry, File, FileContent, FileStatus, Owner, utcnow

AnyRow = Row[*tuple[Any, ...]]  # a row of any width

# Core statements: no ORM identity map or session sync per row
FILES: Table = File.__table__  # type: ignore[attr-defined]
CONTENTS: Table = FileContent.__table__  # type: ignore[attr-defined]
C = FILES.c
CLAIM_COLUMNS = (C.attempts, C.sha256, C.filename, C.size_bytes)


def _conn(session: Session | Connection) -> Connection:
    """Queries accept an ORM Session or a bare Connection (the worker's hot path uses a
    Connection: no identity map, no unit of work)."""
    return session.connection() if isinstance(session, Session) else session


def _guarded_update(
    session: Session | Connection, where: Sequence[Any], values: dict[str, Any]
) -> bool:
    if "meta" in values:  # attribute name → column name
        values = {**values, "metadata": values["meta"]}
        del values["meta"]
    result = _conn(session).execute(update(FILES).where(*where).values(**values))
    return result.rowcount == 1


# --- claims ---------------------------------------------------------------------------------
def claim_uploaded(
    session: Session | Connection,
    *,
    file_id: str,
    worker_id: str,
    max_attempts: int,
    now: datetime,
) -> AnyRow | None:
    """`uploaded` → `processing` with `attempts + 1`, in one statement (the common case).
    Returns (attempts, sha256, filename, size_bytes), or None when the row is not
    `uploaded` with attempts left."""
    return (
        _conn(session)
        .execute(
            update(FILES)
            .where(C.id == file_id, C.status == FileStatus.UPLOADED, C.attempts < max_attempts)
            .values(
                status=FileStatus.PROCESSING,
                attempts=C.attempts + 1,
                lease_owner=worker_id,
                started_at=now,
                updated_at=now,
                error=None,
            )
            .returning(*CLAIM_COLUMNS)
        )
        .first()
    )


def claim_state(session: Session | Connection, *, file_id: str) -> AnyRow | None:
    """What a claim decides on: status, attempts, started_at, lease_owner, and the
    claim columns (sha256, filename, size_bytes)."""
    return (
        _conn(session)
        .execute(
            sa_select(C.status, C.started_at, C.lease_owner, *CLAIM_COLUMNS).where(C.id == file_id)
        )
        .first()
    )


def take_over(
    session: Session | Connection,
    *,
    file_id: str,
    seen_status: str,
    seen_attempts: int,
    worker_id: str,
    now: datetime,
) -> bool:
    """Claim a row still in the state it was read in: `processing` under a new attempt."""
    return _guarded_update(
        session,
        [C.id == file_id, C.status == seen_status, C.attempts == seen_attempts],
        {
            "status": FileStatus.PROCESSING,
            "attempts": seen_attempts + 1,
            "lease_owner": worker_id,
            "started_at": now,
            "updated_at": now,
            "error": None,
        },
    )


def resume(
    session: Session | Connection,
    *,
    file_id: str,
    seen_attempts: int,
    seen_owner: str,
    worker_id: str,
    now: datetime,
) -> bool:
    """Take over a `processing` row its holder handed on (it gave up waiting for the
    database): the same attempt goes on under `worker_id`, not counted again."""
    return _guarded_update(
        session,
        [
            C.id == file_id,
            C.status == FileStatus.PROCESSING,
            C.attempts == seen_attempts,
            C.lease_owner == seen_owner,
        ],
        {"lease_owner": worker_id, "started_at": now, "updated_at": now},
    )


def fail_unfinished(
    session: Session | Connection,
    *,
    file_id: str,
    seen_status: str,
    seen_attempts: int,
    error: str,
    now: datetime,
) -> bool:
    """End a row still in the state it was read in as `failed` with `error`."""
    return _guarded_update(
        session,
        [C.id == file_id, C.status == seen_status, C.attempts == seen_attempts],
        {
            "status": FileStatus.FAILED,
            "error": error,
            "lease_owner": None,
            "updated_at": now,
            "finished_at": now,
        },
    )


def release_to_uploaded(
    session: Session | Connection, *, file_id: str, seen_attempts: int, now: datetime
) -> bool:
    """A `processing` row whose worker is gone goes back to `uploaded`, due at once."""
    return _guarded_update(
        session,
        [C.id == file_id, C.status == FileStatus.PROCESSING, C.attempts == seen_attempts],
        {
            "status": FileStatus.UPLOADED,
            "lease_owner": None,
            "updated_at": now,
            "recover_after": now,
        },
    )


def insert_file(session: Session | Connection, *, row: File) -> None:
    """INSERT a new file row (Core: no unit of work for a one-row insert)."""
    values = {
        c.name: getattr(row, "meta" if c.name == "metadata" else c.name) for c in FILES.columns
    }
    _conn(session).execute(insert(FILES).values(**values))


def write_result(
    session: Session | Connection,
    *,
    file_id: str,
    attempt: int,
    values: dict[str, Any],
    text: str | None = None,
    now: datetime | None = None,
) -> bool:
    """Store a result (and the processed `text`) iff the row is still `processing` under
    this attempt; a stale or duplicate attempt writes nothing."""
    now = now or utcnow()
    values = {**values, "lease_owner": None, "updated_at": now, "finished_at": now}
    ok = _guarded_update(
        session,
        [C.id == file_id, C.status == FileStatus.PROCESSING, C.attempts == attempt],
        values,
    )
    if ok and text is not None:
        _conn(session).execute(insert(CONTENTS).values(file_id=file_id, text=text))
    return ok


def file_text(session: Session | Connection, *, file_id: str) -> str | None:
    """The processed text of a ready file (what goes into context), else None."""
    return (
        _conn(session)
        .execute(sa_select(CONTENTS.c.text).where(CONTENTS.c.file_id == file_id))
        .scalar_one_or_none()
    )


# --- recovery sweep -------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepCandidate:
    file_id: str
    status: str
    attempts: int
    enqueues: int
    lease_owner: str | None
    started_at: datetime | None


def sweep_candidates(
    session: Session,
    *,
    now: datetime,
    uploaded_before: datetime,
    limit: int = 500,
) -> list[SweepCandidate]:
    """`uploaded` rows due for recovery (`recover_after` passed; a row without one counts
    from `created_at` + grace), and every `processing` row (the caller decides which are
    stale: started before the lease, or held by a dead process)."""
    cols = (
        col(File.id),
        col(File.status),
        col(File.attempts),
        col(File.enqueues),
        col(File.lease_owner),
        col(File.started_at),
    )
    due = (
        sa_select(*cols)
        .where(
            col(File.status) == FileStatus.UPLOADED,
            or_(
                col(File.recover_after) <= now,
                and_(col(File.recover_after).is_(None), col(File.created_at) < uploaded_before),
            ),
        )
        .order_by(col(File.recover_after))
        .limit(limit)
    )
    processing = sa_select(*cols).where(col(File.status) == FileStatus.PROCESSING).limit(limit)
    rows = [*session.execute(due).all(), *session.execute(processing).all()]
    return [SweepCandidate(*r) for r in rows]


def bump_uploaded(
    session: Session,
    *,
    file_id: str,
    seen_enqueues: int,
    next_after: datetime,
    now: datetime | None = None,
) -> bool:
    """Take the right to re-enqueue an `uploaded` row (one sweep wins) and set when the
    next re-enqueue may happen."""
    return _guarded_update(
        session,
        [C.id == file_id, C.status == FileStatus.UPLOADED, C.enqueues == seen_enqueues],
        {"enqueues": seen_enqueues + 1, "recover_after": next_after, "updated_at": now or utcnow()},
    )


def enqueue_failed(session: Session, *, file_id: str, now: datetime | None = None) -> None:
    """The sweep won the row but could not publish: make it due again at once."""
    _guarded_update(
        session,
        [C.id == file_id, C.status == FileStatus.UPLOADED],
        {"recover_after": now or utcnow()},
    )


# --- API reads ----------------------------------------------------------------------------
def get_owned(session: Session, *, owner_id: str, file_id: str) -> File | None:
    row = session.get(File, file_id) if len(file_id) <= 64 else None
    return row if row is not None and row.owner_id == owner_id else None


def encode_cursor(row: File) -> str:
    raw = f"{aware(row.created_at).isoformat()}|{row.id}"  # type: ignore[union-attr]
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """Raises ValueError on anything that is not a cursor we made."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        ts, file_id = raw.split("|", 1)
        return datetime.fromisoformat(ts), file_id
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("invalid cursor") from exc


def list_owned(
    session: Session,
    *,
    owner_id: str,
    limit: int,
    status: str | None = None,
    conversation_id: str | None = None,
    project_id: str | None = None,
    after: tuple[datetime, str] | None = None,
) -> tuple[list[File], str | None]:
    """Newest first; returns (rows, next_cursor)."""
    stmt = select(File).where(col(File.owner_id) == owner_id)
    if status is not None:
        stmt = stmt.where(col(File.status) == status)
    if conversation_id is not None:
        stmt = stmt.where(col(File.conversation_id) == conversation_id)
    if project_id is not None:
        stmt = stmt.where(col(File.project_id) == project_id)
    if after is not None:
        ts, last_id = after
        stmt = stmt.where(
            or_(col(File.created_at) < ts, and_(col(File.created_at) == ts, col(File.id) < last_id))
        )
    stmt = stmt.order_by(col(File.created_at).desc(), col(File.id).desc()).limit(limit + 1)
    rows = list(session.exec(stmt).all())
    next_cursor = encode_cursor(rows[limit - 1]) if len(rows) > limit else None
    return rows[:limit], next_cursor


def blob_referenced(session: Session, *, sha256: str) -> bool:
    """Does any row still point at this blob (upload, artefact or cached conversion)?"""
    hit = session.exec(
        select(col(File.id))
        .where(or_(col(File.sha256) == sha256, col(File.content_sha256) == sha256))
        .limit(1)
    ).first()
    if hit is not None:
        return True
    return (
        session.exec(
            select(col(ConversionCacheEntry.key))
            .where(col(ConversionCacheEntry.markdown_sha256) == sha256)
            .limit(1)
        ).first()
        is not None
    )


def aware(ts: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; they are UTC."""
    if ts is None or ts.tzinfo is not None:
        return ts
    return ts.replace(tzinfo=UTC)


def count_by_status(session: Session | Connection) -> dict[str, int]:
    """{status: rows}: one GROUP BY over the `status` index (for GET /metrics)."""
    rows = _conn(session).execute(
        sa_select(C.status, func.count()).select_from(FILES).group_by(C.status)
    )
    return {str(status): int(n) for status, n in rows}


def owner_usage(session: Session, *, owner_id: str, lock: bool = False) -> tuple[int, int]:
    """(files, bytes uploaded) of one owner, from `ix_files_owner_size` alone. With
    `lock`, the owner's row is locked first (PostgreSQL: FOR UPDATE), so two uploads of
    one owner check their quota one after the other; SQLite's write transaction
    (BEGIN IMMEDIATE) already serialises them."""
    if lock:
        session.execute(sa_select(col(Owner.id)).where(col(Owner.id) == owner_id).with_for_update())
    count, total = session.execute(
        sa_select(func.count(), func.coalesce(func.sum(C.size_bytes), 0)).where(
            C.owner_id == owner_id
        )
    ).one()
    return int(count), int(total)


def referenced_blobs(session: Session, *, shas: Sequence[str]) -> set[str]:
    """Which of `shas` a row still points at (an upload, an artefact, a cached conversion).
    Every table that stores a blob's sha256 belongs here and in `blob_referenced`."""
    if not shas:
        return set()
    found: set[str] = set()
    for column in (
        col(File.sha256),
        col(File.content_sha256),
        col(ConversionCacheEntry.markdown_sha256),
    ):
        rows = session.execute(sa_select(column).where(col(column).in_(list(shas))).distinct())
        found.update(str(r[0]) for r in rows)
    return found
