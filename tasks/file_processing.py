"""The plain functions behind the file tasks (tests call these directly).

`process_file_by_id` re-reads the row, claims it (attempts counted on the row
before any work), runs the engine on the stored blob, writes the result in
one short transaction guarded by status + attempt. `recover_files` is the
recovery sweep beat runs.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from contextq.settings import Settings
from store import files_queries as q
from store.blobs import BlobStore, get_blob_store
from store.db import get_engine, read_session, session_scope
from store.notify import publish_file_status
from store.tables import FileStatus, utcnow

log = logging.getLogger("contextq.tasks.files")

TEXT_MEDIA_TYPE = "text/markdown; charset=utf-8"
LEASE_MARGIN_S = 10.0
SENTINEL_SCAN_BYTES = 64 * 1024 * 1024


# --- who holds a claim ----------------------------------------------------------------------
@cache
def _identity(pid: int) -> str:
    import psutil

    start = int(psutil.Process(pid).create_time() * 1000)
    return f"{socket.gethostname()}:{pid}:{start}"


def worker_identity() -> str:
    """'<host>:<pid>:<start ms>' of this process (recomputed after a fork)."""
    return _identity(os.getpid())


def holder_is_dead(holder: str) -> bool:
    """True only when we can tell: the holder ran on this host and that process is gone."""
    import psutil

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


# --- processing ----------------------------------------------------------------------------
def _conversion_cache(settings: Settings, blobs: BlobStore) -> Any:
    from store.conversion_cache import DbConversionCache

    return DbConversionCache(
        blobs=blobs,
        redis_url=settings.REDIS_URL,
        lock_timeout_s=settings.TASK_TIME_LIMIT_S + LEASE_MARGIN_S,
        wait_timeout_s=settings.TASK_SOFT_TIME_LIMIT_S,
    )


def _test_hooks(settings: Settings, blob_path: Any) -> None:
    if not settings.test_hooks_enabled:
        return
    if settings.TEST_KILL_SENTINEL:
        with open(blob_path, "rb") as fh:
            head = fh.read(SENTINEL_SCAN_BYTES)
        if settings.TEST_KILL_SENTINEL.encode() in head:
            log.warning("TEST_KILL_SENTINEL found: SIGKILL pid %s", os.getpid())
            os.kill(os.getpid(), signal.SIGKILL)
    if settings.TEST_PROCESS_DELAY_S > 0:
        time.sleep(settings.TEST_PROCESS_DELAY_S)


@dataclass(frozen=True)
class Outcome:
    status: str  # claimed outcome, or the final row status written
    attempt: int = 0
    written: bool = False


def process_file_by_id(
    file_id: str,
    *,
    settings: Settings,
    time_limit_errors: tuple[type[BaseException], ...] = (),
    on_claimed: Callable[[q.Claim], None] | None = None,
) -> Outcome:
    """Claim, process, store. `time_limit_errors` (Celery's SoftTimeLimitExceeded) end the
    row `failed` saying the time limit was hit."""
    with get_engine().begin() as conn:  # Core connection: the lean path
        claim = q.claim_file(
            conn,
            file_id=file_id,
            worker_id=worker_identity(),
            max_attempts=settings.MAX_ATTEMPTS,
            lease_expired_before=q.lease_cutoff(
                time_limit_s=settings.TASK_TIME_LIMIT_S, margin_s=LEASE_MARGIN_S
            ),
            holder_is_dead=holder_is_dead,
        )
    if claim.outcome != "claimed":
        if claim.outcome == "exhausted":
            log.error("file %s failed: attempts exhausted", file_id)
            publish_file_status(settings.REDIS_URL, file_id, FileStatus.FAILED)
        return Outcome(claim.outcome)
    if on_claimed is not None:
        on_claimed(claim)

    blobs = get_blob_store(settings)
    values: dict[str, Any]
    text: str | None = None
    try:
        blob_path = blobs.path(claim.sha256)
        _test_hooks(settings, blob_path)
        values, text = _run_engine(
            blob_path,
            claim.filename,
            expected_size=claim.size_bytes,
            settings=settings,
            blobs=blobs,
            reraise=time_limit_errors,
        )
    except time_limit_errors:
        values = {
            "status": FileStatus.FAILED,
            "error": (
                f"processing took longer than the time limit ({settings.TASK_SOFT_TIME_LIMIT_S}"
                " s, TASK_SOFT_TIME_LIMIT_S); the file is too large or too complex: split it"
            ),
        }
    with get_engine().begin() as conn:
        written = q.write_result(
            conn, file_id=file_id, attempt=claim.attempt, values=values, text=text
        )
    if written:
        publish_file_status(settings.REDIS_URL, file_id, values["status"])
    else:
        log.info("file %s: result of attempt %s not written (row moved on)", file_id, claim.attempt)
    return Outcome(values["status"], claim.attempt, written)


def _run_engine(
    blob_path: Any,
    filename: str,
    *,
    expected_size: int,
    settings: Settings,
    blobs: BlobStore,
    reraise: tuple[type[BaseException], ...],
) -> tuple[dict[str, Any], str | None]:
    """(row values, processed text). The text goes to `file_contents` (small: already
    cut); only a binary artefact is written as a blob."""
    from contextq.files.pipeline import process_file

    try:
        stored_size = blob_path.stat().st_size
    except FileNotFoundError:
        stored_size = -1
    if stored_size != expected_size:
        return {
            "status": FileStatus.FAILED,
            "error": "the uploaded bytes are missing or damaged in storage (a crash right "
            "after the upload?); upload the file again",
        }, None
    result = process_file(
        blob_path,
        filename,
        settings=settings,
        cache=_conversion_cache(settings, blobs),
        reraise=reraise,
    )
    values: dict[str, Any] = {
        "file_type": (result.file_type or "unknown")[:32],
        "category": (result.category or "unsupported")[:16],
        "media_type": (result.media_type or "application/octet-stream")[:255],
        "meta": result.metadata or {},
        "cache_hit": bool(result.cache_hit),
    }
    if not result.success:
        values.update(
            status=FileStatus.FAILED, error=result.error or "the file could not be processed"
        )
        return values, None
    text = (result.content or "").replace("\x00", "")
    content_sha, content_type = None, TEXT_MEDIA_TYPE
    if result.binary is not None:
        content_sha = blobs.put_bytes(result.binary)
        content_type = result.binary_media_type or "application/octet-stream"
    values.update(
        status=FileStatus.READY,
        error=None,
        token_count=result.token_count,
        processed_token_count=result.processed_token_count,
        truncation=result.truncation.to_dict(),
        content_sha256=content_sha,
        content_media_type=content_type,
    )
    return values, text


# --- recovery sweep --------------------------------------------------------------------------
@dataclass
class SweepReport:
    requeued: list[str]
    failed: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"requeued": self.requeued, "failed": self.failed}


def recover_files(*, settings: Settings, enqueue: Callable[[str], object]) -> SweepReport:
    """Re-enqueue rows left `uploaded` past the grace and `processing` rows whose worker is
    gone (same host) or whose lease expired; rows out of attempts end `failed`.

    Each row is taken with a conditional update, so two sweeps never enqueue it twice.
    """
    from datetime import timedelta

    now = utcnow()
    lease_before = q.lease_cutoff(
        time_limit_s=settings.TASK_TIME_LIMIT_S, margin_s=LEASE_MARGIN_S, now=now
    )
    grace = settings.RECOVERY_UPLOADED_GRACE_S
    with read_session() as session:
        candidates = q.sweep_candidates(
            session,
            now=now,
            uploaded_before=now - timedelta(seconds=grace),
        )
    report = SweepReport([], [])
    for c in candidates:
        if c.status == FileStatus.UPLOADED:
            wait = q.recover_backoff_s(
                grace_s=grace, enqueues=c.enqueues, cap_s=settings.TASK_EXPIRES_S
            )
            with session_scope() as session:
                won = q.bump_uploaded(
                    session,
                    file_id=c.file_id,
                    seen_enqueues=c.enqueues,
                    next_after=now + timedelta(seconds=wait),
                )
            if won and not _safe_enqueue(enqueue, c.file_id, report):
                with session_scope() as session:
                    q.enqueue_failed(session, file_id=c.file_id)
            continue
        started = q.aware(c.started_at)
        stale = started is None or started < lease_before
        if not stale and not (c.lease_owner and holder_is_dead(c.lease_owner)):
            continue  # a live worker holds it
        with session_scope() as session:
            action = q.release_stale_processing(
                session,
                file_id=c.file_id,
                attempts=c.attempts,
                max_attempts=settings.MAX_ATTEMPTS,
            )
        if action == "requeue":
            _safe_enqueue(enqueue, c.file_id, report)
        elif action == "failed":
            report.failed.append(c.file_id)
            publish_file_status(settings.REDIS_URL, c.file_id, FileStatus.FAILED)
    if report.requeued or report.failed:
        log.warning("recovery sweep: requeued %s, failed %s", report.requeued, report.failed)
    return report


def _safe_enqueue(enqueue: Callable[[str], object], file_id: str, report: SweepReport) -> bool:
    try:
        enqueue(file_id)
    except Exception:  # the row stays `uploaded`; the next sweep tries again
        log.exception("recovery sweep could not enqueue %s", file_id)
        return False
    report.requeued.append(file_id)
    return True
