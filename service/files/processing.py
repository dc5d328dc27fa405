"""Phase two of an upload: `process_file` claims the row, runs the engine on the stored
blob and writes the result, in short transactions of its own (no transaction is held
while the engine runs).

The result is written by a conditional update guarded by status + attempt, so a stale
or duplicate attempt writes nothing. Every database step (claim, project check, write)
waits out a database that is briefly locked or unreachable, and a database away for
longer hands the file on to a new message (`service.files.outage`), so a file accepted
just before an outage still ends `ready`. Long polls are told of every final status over
Redis (`store.notify`). One INFO line per processed file (logger `contextq.files`):
its id, file_type, final status and duration.

A file in a project is indexed for search (`service.files.indexing`) before its result
is written, so a `ready` project file is searchable; a file moved into a project while it
was processing is indexed right after (its project is read again once `ready` is
committed: a move committed later saw `ready` and sent `index_file` itself).
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextq.settings import Settings
from service import events
from service.files import indexing, outage
from service.files.claims import (
    Claim,
    Release,
    claim_file,
    lease_cutoff,
    worker_identity,
)
from service.files.conversion import conversion_cache
from store import files_queries as q
from store.blobs import BlobMissing, BlobStore, get_blob_store
from store.db import UNAVAILABLE_ERRORS, get_engine
from store.notify import publish_file_status
from store.tables import FileStatus

log = logging.getLogger("contextq.files")

TEXT_MEDIA_TYPE = "text/markdown; charset=utf-8"
SENTINEL_SCAN_BYTES = 64 * 1024 * 1024
MISSING_BLOB = (
    "the uploaded bytes are missing or damaged in storage (a crash right after the "
    "upload?); upload the file again"
)


@dataclass(frozen=True)
class Outcome:
    # the claim's outcome when it did not claim, "handed_on" when the database stayed
    # away (`service.files.outage`), else the final row status
    status: str
    attempt: int = 0
    written: bool = False
    index_s: float | None = None  # time spent indexing for search, when the file was indexed


def process_file(
    *,
    settings: Settings,
    file_id: str,
    time_limit_errors: tuple[type[BaseException], ...] = (),
    released: Sequence[Release] = (),
) -> Outcome:
    """Claim, process, store. `time_limit_errors` (Celery's SoftTimeLimitExceeded) end the
    row `failed` saying the time limit was hit. Redelivery of a finished file is a no-op.
    A database away for longer than the task may wait hands the file on
    (`service.files.outage`; `released`: the holders that handed it on so far)."""
    started = time.perf_counter()
    waits = outage.DatabaseWaits.for_task(settings)
    try:
        claim = waits.run(
            lambda: _claim(file_id, settings, released), what=f"claim of file {file_id}"
        )
        if claim.outcome != "claimed":
            return _not_claimed(claim, settings=settings)
        values, text, full_text = _values_for(
            claim, settings=settings, time_limit_errors=time_limit_errors
        )
        indexed = _index_if_in_project(claim, values, full_text, settings=settings, waits=waits)
        written, event = waits.run(
            lambda: _write(claim, values, text), what=f"result of file {file_id}"
        )
    except UNAVAILABLE_ERRORS as exc:
        return Outcome(outage.hand_on(file_id, released=released, error=exc, settings=settings))
    status = values["status"]
    if written:
        publish_file_status(settings.REDIS_URL, file_id, status)
        events.publish(settings, event)
    log.info(
        "file %s processed: file_type=%s status=%s duration_ms=%.1f%s",
        file_id,
        values.get("file_type", "unknown"),
        status,
        (time.perf_counter() - started) * 1000,
        "" if written else f" (attempt {claim.attempt} not written: the row moved on)",
    )
    if written and status == FileStatus.READY and indexed is None:
        indexed = _index_if_moved_in(file_id, settings=settings, waits=waits)
    return Outcome(status, claim.attempt, written, None if indexed is None else indexed.duration_s)


def _claim(file_id: str, settings: Settings, released: Sequence[Release]) -> Claim:
    with get_engine().begin() as conn:  # Core connection: the lean path
        return claim_file(
            conn,
            file_id=file_id,
            worker_id=worker_identity(),
            max_attempts=settings.MAX_ATTEMPTS,
            lease_expired_before=lease_cutoff(settings),
            released=released,
        )


def _not_claimed(claim: Claim, *, settings: Settings) -> Outcome:
    if claim.outcome == "exhausted":
        log.error("file %s failed: attempts exhausted", claim.file_id)
        publish_file_status(settings.REDIS_URL, claim.file_id, FileStatus.FAILED)
        events.file_finished(None, file_id=claim.file_id, settings=settings)
    return Outcome(claim.outcome)


def _write(claim: Claim, values: dict[str, Any], text: str | None) -> tuple[bool, Any]:
    """The guarded result write (and its `file.finished` event), in one transaction."""
    with get_engine().begin() as conn:
        written = q.write_result(
            conn, file_id=claim.file_id, attempt=claim.attempt, values=values, text=text
        )
        return written, (events.file_finished(conn, file_id=claim.file_id) if written else None)


def _index_if_in_project(
    claim: Claim,
    values: dict[str, Any],
    full_text: Any,
    *,
    settings: Settings,
    waits: outage.DatabaseWaits,
) -> indexing.Indexed | None:
    """Index a processed file of a project before its result is written; the result's
    metadata records it (`metadata.index`). `full_text`: what the processor extracted
    (a document's conversion), chunked as it is instead of being read again."""
    if values["status"] != FileStatus.READY or _project_of(claim.file_id, waits) is None:
        return None
    meta = values.get("meta") or {}
    target = indexing.IndexTarget(
        file_id=claim.file_id,
        sha256=claim.sha256,
        filename=claim.filename,
        category=values.get("category", "unsupported"),
        known_tokens=values.get("token_count") if meta.get("token_count_exact", True) else None,
        full_text=full_text,
    )
    done = indexing.index_content(settings=settings, target=target)
    values["meta"] = {**meta, "index": done.meta}
    return done


def _project_of(file_id: str, waits: outage.DatabaseWaits) -> str | None:
    return waits.run(
        lambda: indexing.file_project(file_id=file_id), what=f"project of file {file_id}"
    )


def _index_if_moved_in(
    file_id: str, *, settings: Settings, waits: outage.DatabaseWaits
) -> indexing.Indexed | None:
    """A file moved into a project while it was processing: index it now that it is ready."""
    if _project_of(file_id, waits) is None:
        return None
    return indexing.index_file(settings=settings, file_id=file_id)


def _values_for(
    claim: Claim, *, settings: Settings, time_limit_errors: tuple[type[BaseException], ...]
) -> tuple[dict[str, Any], str | None, Any]:
    """(row values, processed text, the processor's whole extracted text or None) of a
    claimed file; a time limit ends it `failed`."""
    blobs = get_blob_store(settings)
    try:
        with blobs.local_copy(claim.sha256) as blob_path:  # S3: a bounded local cache
            _test_hooks(settings, blob_path)
            return _run_engine(
                blob_path,
                claim.filename,
                expected_size=claim.size_bytes,
                settings=settings,
                blobs=blobs,
                reraise=time_limit_errors,
            )
    except BlobMissing:
        return {"status": FileStatus.FAILED, "error": MISSING_BLOB}, None, None
    except time_limit_errors:
        return (
            {
                "status": FileStatus.FAILED,
                "error": (
                    f"processing took longer than the time limit ({settings.TASK_SOFT_TIME_LIMIT_S}"
                    " s, TASK_SOFT_TIME_LIMIT_S); the file is too large or too complex: split it"
                ),
            },
            None,
            None,
        )


def _test_hooks(settings: Settings, blob_path: Path) -> None:
    """Fault injection for the integration tests (refused outside development)."""
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


def _run_engine(
    blob_path: Path,
    filename: str,
    *,
    expected_size: int,
    settings: Settings,
    blobs: BlobStore,
    reraise: tuple[type[BaseException], ...],
) -> tuple[dict[str, Any], str | None, Any]:
    """(row values, processed text, whole extracted text). The text goes to
    `file_contents` (small: already cut, and cleaned of NUL by the engine's `finalize`);
    only a binary artefact is written as a blob. The whole text (`result.full_text`) is
    only handed to indexing, in this process."""
    # the API imports this module for its names: the converters load in the worker alone
    from contextq.files.pipeline import process_file as run_pipeline  # noqa: PLC0415 - heavy

    try:
        stored_size = blob_path.stat().st_size
    except FileNotFoundError:
        stored_size = -1
    if stored_size != expected_size:
        return {"status": FileStatus.FAILED, "error": MISSING_BLOB}, None, None
    result = run_pipeline(
        blob_path,
        filename,
        settings=settings,
        cache=conversion_cache(settings, blobs),
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
        return values, None, None
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
    return values, result.content or "", result.full_text
