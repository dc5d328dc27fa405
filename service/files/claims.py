"""Claims: who may process a file, counted on the row before any work starts.

A claim moves the row to `processing`, increments `attempts` and records its
holder as "<host>:<pid>:<process start ms>" (`files.lease_owner`). A redelivered
message takes a `processing` row over at once when that process is gone (same
host), else only once the lease has expired; a row out of attempts ends
`failed` instead of running again (DESIGN habit 3). Each change is a
conditional update on the state the row was read in, so two claimants never
both win.

A holder that gives up waiting for the database hands the file on
(`service.files.processing`): the message it publishes names it in a `Release`
(its identity, and a moment after every claim it made of the file). The next
claim resumes a `processing` row still held under such a release at once, as
the same attempt (an outage is not the file's fault), instead of finding it
"busy" until the lease expires.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any, Literal

import psutil
from sqlalchemy import Connection
from sqlmodel import Session

from contextq.settings import Settings
from store import files_queries as q
from store.tables import FileStatus, utcnow

ClaimOutcome = Literal["claimed", "missing", "done", "busy", "exhausted"]

# the lease outlives the hard time limit by this much before a row counts as abandoned
LEASE_MARGIN_S = 10.0
# a file is handed on at most this many times in a row (the releases its message
# carries); past that its row waits for the lease and the recovery sweep
MAX_RELEASES = 20


@cache
def _identity(pid: int) -> str:
    start = int(psutil.Process(pid).create_time() * 1000)
    return f"{socket.gethostname()}:{pid}:{start}"


def worker_identity() -> str:
    """'<host>:<pid>:<start ms>' of this process (recomputed after a fork)."""
    return _identity(os.getpid())


def holder_is_dead(holder: str) -> bool:
    """True only when we can tell: the holder ran on this host and that process is gone."""
    try:
        host, pid_s, start_s = holder.rsplit(":", 2)
        pid, start = int(pid_s), int(start_s)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False  # another machine: wait for the lease to expire
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return True
        return int(proc.create_time() * 1000) != start  # pid reused by another process
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def lease_cutoff(settings: Settings, now: datetime | None = None) -> datetime:
    """A `processing` row started before this has outlived any worker's time limit."""
    margin = timedelta(seconds=settings.TASK_TIME_LIMIT_S + LEASE_MARGIN_S)
    return (now or utcnow()) - margin


def holder_gone(
    *,
    lease_owner: str | None,
    started_at: datetime | None,
    cutoff: datetime,
    is_dead: Callable[[str], bool] = holder_is_dead,
) -> bool:
    """A `processing` row is abandoned when its lease expired or its holder died."""
    if _started_before(started_at, cutoff):
        return True
    return bool(lease_owner) and is_dead(lease_owner or "")


@dataclass(frozen=True)
class Release:
    """A holder that gave up on a file while the database was away; every claim it made
    of the file started at or before `before` (a claim whose commit it never saw may
    have landed: the row may still name it)."""

    holder: str
    before: datetime

    def as_message(self) -> list[str]:
        return [self.holder, self.before.isoformat()]


def releases_from(raw: Sequence[Sequence[str]] | None) -> tuple[Release, ...]:
    """The releases a `process_file` message carries ([holder, ISO time] pairs); an entry
    that is not one is ignored (it only ever frees a row sooner)."""
    out: list[Release] = []
    for entry in raw or ():
        try:
            holder, before = entry
            moment = datetime.fromisoformat(before)
        except (TypeError, ValueError):
            continue
        if moment.tzinfo is not None:
            out.append(Release(str(holder), moment))
    return tuple(out[-MAX_RELEASES:])


def handed_on(
    *, lease_owner: str | None, started_at: datetime | None, released: Sequence[Release]
) -> bool:
    """The row is held under a claim its holder has since given up."""
    started = q.aware(started_at)
    return started is not None and any(
        r.holder == lease_owner and started <= r.before for r in released
    )


def exhausted_message(attempts: int) -> str:
    return (
        f"processing crashed or timed out the worker {attempts} times; the file is probably "
        "hostile or too large to process within the worker's time and memory limits "
        "(TASK_TIME_LIMIT_S, WORKER_MAX_MEMORY_MB)"
    )


@dataclass(frozen=True)
class Claim:
    outcome: ClaimOutcome
    file_id: str
    attempt: int = 0
    sha256: str = ""
    filename: str = ""
    size_bytes: int = 0


def claim_file(  # noqa: PLR0911 - one return per claim outcome
    session: Session | Connection,
    *,
    file_id: str,
    worker_id: str,
    max_attempts: int,
    lease_expired_before: datetime,
    holder_is_dead: Callable[[str], bool] = holder_is_dead,
    now: datetime | None = None,
    released: Sequence[Release] = (),
) -> Claim:
    """Claim a file for processing; `attempts` is incremented before any work starts.

    Claimable: `uploaded`, or `processing` whose holder is dead / is this very
    process / started before `lease_expired_before`. A `ready`/`failed` row is
    left alone (redelivery is a no-op). Over `max_attempts` the row ends `failed`.
    A `processing` row held under one of `released` is resumed (same attempt).
    """
    now = now or utcnow()
    fast = q.claim_uploaded(
        session, file_id=file_id, worker_id=worker_id, max_attempts=max_attempts, now=now
    )
    if fast is not None:  # the common case in one statement
        return Claim("claimed", file_id, fast.attempts, fast.sha256, fast.filename, fast.size_bytes)
    row = q.claim_state(session, file_id=file_id)
    if row is None:
        return Claim("missing", file_id)
    if row.status in (FileStatus.READY, FileStatus.FAILED):
        return Claim("done", file_id)
    if row.status == FileStatus.PROCESSING and handed_on(
        lease_owner=row.lease_owner, started_at=row.started_at, released=released
    ):
        return _resume(session, row, file_id=file_id, worker_id=worker_id, now=now)
    if (
        row.status == FileStatus.PROCESSING
        and row.lease_owner != worker_id
        and not holder_gone(
            lease_owner=row.lease_owner,
            started_at=row.started_at,
            cutoff=lease_expired_before,
            is_dead=holder_is_dead,
        )
    ):
        return Claim("busy", file_id)
    seen = {"file_id": file_id, "seen_status": row.status, "seen_attempts": row.attempts}
    if row.attempts >= max_attempts:
        failed = q.fail_unfinished(session, **seen, error=exhausted_message(row.attempts), now=now)
        return Claim("exhausted" if failed else "busy", file_id)
    if not q.take_over(session, **seen, worker_id=worker_id, now=now):
        return Claim("busy", file_id)
    return Claim("claimed", file_id, row.attempts + 1, row.sha256, row.filename, row.size_bytes)


def _resume(
    session: Session | Connection, row: Any, *, file_id: str, worker_id: str, now: datetime
) -> Claim:
    """The row's holder handed it on: the same attempt goes on here."""
    if not q.resume(
        session,
        file_id=file_id,
        seen_attempts=row.attempts,
        seen_owner=row.lease_owner,
        worker_id=worker_id,
        now=now,
    ):
        return Claim("busy", file_id)
    return Claim("claimed", file_id, row.attempts, row.sha256, row.filename, row.size_bytes)


def _started_before(started_at: datetime | None, cutoff: datetime) -> bool:
    started = q.aware(started_at)
    return started is None or started < cutoff
