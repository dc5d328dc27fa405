"""Sending tasks from outside the worker (the API, the CLI, benchmarks).

A small Celery app per broker URL, configured like the worker but importing
no task modules. Every enqueue carries an `expires`; publishing gives up
quickly when the broker is down (the caller keeps the row for the sweep).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from celery import Celery

from contextq.settings import Settings, get_settings
from tasks import names
from worker.config import celery_config

_apps: dict[str, Celery] = {}
_lock = threading.Lock()

# fail fast: the row is the source of truth and the recovery sweep re-enqueues
PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}


def get_producer(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    key = settings.REDIS_URL or ""
    with _lock:
        app = _apps.get(key)
        if app is None:
            app = Celery("contextq-producer", set_as_current=False)
            app.conf.update(celery_config(settings))
            _apps[key] = app
        return app


def send(
    name: str,
    *,
    args: list[Any],
    queue: str,
    settings: Settings | None = None,
    expires: float | None = None,
    ignore_result: bool = True,
    **options: Any,
) -> str:
    """Publish task `name` to `queue`; returns the task id. Raises on broker failure."""
    settings = settings or get_settings()
    result = get_producer(settings).send_task(
        name,
        args=args,
        queue=queue,
        routing_key=queue,
        expires=expires if expires is not None else settings.TASK_EXPIRES_S,
        ignore_result=ignore_result,
        retry=True,
        retry_policy=PUBLISH_RETRY_POLICY,
        **options,
    )
    return str(result.id)


def enqueue_process_file(
    file_id: str, *, settings: Settings | None = None, app: Celery | None = None
) -> str:
    """process_file(file_id) on the `files` queue (ids only, never contents)."""
    settings = settings or get_settings()
    if app is not None:  # inside the worker: reuse its connection pool
        return str(
            app.send_task(
                names.PROCESS_FILE,
                args=[file_id],
                queue=names.QUEUE_FILES,
                routing_key=names.QUEUE_FILES,
                expires=settings.TASK_EXPIRES_S,
                ignore_result=True,
                retry=True,
                retry_policy=PUBLISH_RETRY_POLICY,
            ).id
        )
    return send(names.PROCESS_FILE, args=[file_id], queue=names.QUEUE_FILES, settings=settings)


def reset() -> None:
    """Close and forget producers (tests switch brokers)."""
    with _lock:
        apps = list(_apps.values())
        _apps.clear()
    for app in apps:
        with contextlib.suppress(Exception):  # best effort on teardown
            app.close()
