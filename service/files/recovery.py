"""The recovery sweep beat runs every RECOVERY_SWEEP_INTERVAL_S.

It re-enqueues rows left `uploaded` (a lost or failed publish, a broker that
was down) with a doubling wait between re-enqueues, and `processing` rows
whose worker is gone (same host) or whose lease expired; a row already out of
attempts ends `failed`. Each row is taken with a conditional update, so two
sweeps at once never enqueue it twice.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from contextq.settings import Settings
from service import enqueue, events
from service.files.claims import exhausted_message, holder_gone, lease_cutoff
from store import files_queries as q
from store.db import read_session, session_scope
from store.notify import publish_file_status
from store.tables import FileStatus, utcnow

log = logging.getLogger("contextq.files")


@dataclass
class SweepReport:
    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"requeued": self.requeued, "failed": self.failed}


def recover_backoff_s(*, grace_s: float, enqueues: int, cap_s: float) -> float:
    """Wait before the next re-enqueue of a still-`uploaded` row: grace x 2^enqueues."""
    return float(min(max(grace_s, 1.0) * 2.0 ** min(enqueues, 20), cap_s))


def recover_files(
    *, settings: Settings, send: Callable[[str], object] | None = None
) -> SweepReport:
    """One sweep. `send(file_id)` publishes `process_file` (by default through
    `service.enqueue`, after each row's own commit)."""
    send = send or functools.partial(enqueue.process_file, settings=settings)
    now = utcnow()
    grace = settings.RECOVERY_UPLOADED_GRACE_S
    with read_session() as session:
        candidates = q.sweep_candidates(
            session, now=now, uploaded_before=now - timedelta(seconds=grace)
        )
    report = SweepReport()
    cutoff = lease_cutoff(settings, now)
    for c in candidates:
        if c.status == FileStatus.UPLOADED:
            _requeue_uploaded(c, settings=settings, send=send, now=now, report=report)
        elif holder_gone(lease_owner=c.lease_owner, started_at=c.started_at, cutoff=cutoff):
            _release_processing(c, settings=settings, send=send, now=now, report=report)
    if report.requeued or report.failed:
        log.warning("recovery sweep: requeued %s, failed %s", report.requeued, report.failed)
    return report


def _requeue_uploaded(
    c: q.SweepCandidate,
    *,
    settings: Settings,
    send: Callable[[str], object],
    now: datetime,
    report: SweepReport,
) -> None:
    wait = recover_backoff_s(
        grace_s=settings.RECOVERY_UPLOADED_GRACE_S,
        enqueues=c.enqueues,
        cap_s=settings.TASK_EXPIRES_S,
    )
    with session_scope() as session:
        won = q.bump_uploaded(
            session,
            file_id=c.file_id,
            seen_enqueues=c.enqueues,
            next_after=now + timedelta(seconds=wait),
        )
    if not won:
        return  # another sweep took it
    if enqueue.now_or_log(send, c.file_id):
        report.requeued.append(c.file_id)
    else:  # the row stays `uploaded`, due again at once for the next sweep
        with session_scope() as session:
            q.enqueue_failed(session, file_id=c.file_id)


def _release_processing(
    c: q.SweepCandidate,
    *,
    settings: Settings,
    send: Callable[[str], object],
    now: datetime,
    report: SweepReport,
) -> None:
    """A `processing` row whose worker is gone: back to `uploaded` and re-enqueued, or
    `failed` when it already had MAX_ATTEMPTS."""
    with session_scope() as session:
        if c.attempts >= settings.MAX_ATTEMPTS:
            failed = q.fail_unfinished(
                session,
                file_id=c.file_id,
                seen_status=FileStatus.PROCESSING,
                seen_attempts=c.attempts,
                error=exhausted_message(c.attempts),
                now=now,
            )
            released = False
        else:
            failed = False
            released = q.release_to_uploaded(
                session, file_id=c.file_id, seen_attempts=c.attempts, now=now
            )
    if released and enqueue.now_or_log(send, c.file_id):
        report.requeued.append(c.file_id)
    if failed:
        report.failed.append(c.file_id)
        publish_file_status(settings.REDIS_URL, c.file_id, FileStatus.FAILED)
        events.file_finished(None, file_id=c.file_id, settings=settings)
