"""The file tasks: each a few lines over `service.files` (and the storage sweep)."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from contextq.settings import get_settings
from service import files
from service.blob_sweep import sweep_blobs as run_blob_sweep
from worker import names


@shared_task(name=names.PROCESS_FILE, ignore_result=True, acks_late=True)
def process_file(file_id: str, released: list[list[str]] | None = None) -> None:
    """Phase two of the upload: the row, not the result backend, records progress.
    `released`: the holders that handed the file on while the database was away."""
    files.process_file(
        settings=get_settings(),
        file_id=file_id,
        time_limit_errors=(SoftTimeLimitExceeded,),
        released=files.releases_from(released),
    )


@shared_task(name=names.INDEX_FILE, ignore_result=True, acks_late=True)
def index_file(file_id: str) -> None:
    """Index a ready file moved into a project (a no-op when already indexed)."""
    files.index_file(settings=get_settings(), file_id=file_id)


@shared_task(name=names.RECOVER_FILES, ignore_result=True)
def recover_files() -> dict[str, Any]:
    """The recovery sweep (beat, every RECOVERY_SWEEP_INTERVAL_S)."""
    return files.recover_files(settings=get_settings()).as_dict()


@shared_task(name=names.SWEEP_BLOBS, ignore_result=True)
def sweep_blobs() -> dict[str, int]:
    """The storage sweep (beat, every BLOB_SWEEP_INTERVAL_S): unreferenced blobs go."""
    return run_blob_sweep(settings=get_settings()).as_dict()


@shared_task(name=names.EMBED_MISSING, ignore_result=True)
def embed_missing() -> dict[str, Any]:
    """The vectors backfill (beat, every RECOVERY_SWEEP_INTERVAL_S): chunk sets indexed
    before hybrid search get their passage vectors, a few per run."""
    return files.embed_missing_vectors().as_dict()


@shared_task(name=names.NOOP)
def noop() -> None:
    """The framework's floor for bench/upload_queue.py."""
