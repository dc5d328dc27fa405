"""Tasks over files: each a few lines over tasks/file_processing.py."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from contextq.settings import get_settings
from tasks.file_processing import process_file_by_id, recover_files
from worker import names


@shared_task(name=names.PROCESS_FILE, ignore_result=True, acks_late=True)
def process_file(file_id: str) -> None:
    """Phase two of the upload: the row, not the result backend, records progress."""
    process_file_by_id(file_id, settings=get_settings(), time_limit_errors=(SoftTimeLimitExceeded,))


@shared_task(name=names.RECOVER_FILES, bind=True, ignore_result=True)
def recover_files_task(self: Any) -> dict[str, Any]:
    from service import enqueue

    settings = get_settings()
    report = recover_files(
        settings=settings,
        enqueue=lambda file_id: enqueue.process_file(file_id, settings=settings),
    )
    return report.as_dict()


@shared_task(name=names.NOOP)
def noop() -> None:
    """The framework's floor for bench/queue.py."""
