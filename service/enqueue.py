"""Sending Celery tasks: the one place that owns "commit, then enqueue, with `expires`".

Use cases never publish inside a transaction. They register what to send once the
transaction that wrote the rows commits:

    enqueue.after_commit(session, enqueue.process_file, file_id, settings=settings)

`after_commit` hooks the session's commit (SQLAlchemy's `after_commit` event): the
message goes out only once the rows it names are visible to a worker, and not at all
if the transaction rolls back. A failed publish is logged (and handed to `on_error`)
but never raised: the row is the source of truth and the beat sweeps find it again.

Messages carry ids only, never contents, and always an `expires`. Publishing gives up
quickly when the broker is down. The producer is a small Celery app per broker URL,
configured like the worker (`worker.config`) but importing no task modules.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from celery import Celery
from sqlalchemy import event
from sqlalchemy.orm import Session

from contextq.settings import Settings, get_settings
from worker import names
from worker.config import celery_config

log = logging.getLogger("contextq.enqueue")

# fail fast: the row is the source of truth and the recovery sweep re-enqueues
PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}

_apps: dict[str, Celery] = {}
_lock = threading.Lock()

_PENDING = "contextq.after_commit"


def producer(settings: Settings | None = None) -> Celery:
    """The Celery app used to publish (one per broker URL, built once per process)."""
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
    **options: Any,
) -> str:
    """Publish task `name` to `queue` now; returns the task id. Raises on broker failure.
    Prefer `after_commit` from a use case."""
    settings = settings or get_settings()
    result = producer(settings).send_task(
        name,
        args=args,
        queue=queue,
        routing_key=queue,
        expires=expires if expires is not None else settings.TASK_EXPIRES_S,
        ignore_result=True,
        retry=True,
        retry_policy=PUBLISH_RETRY_POLICY,
        **options,
    )
    return str(result.id)


def process_file(
    file_id: str,
    *,
    settings: Settings | None = None,
    released: list[list[str]] | None = None,
    countdown: float | None = None,
) -> str:
    """`process_file(file_id)` on the `files` queue; a file handed on by a worker that
    gave up waiting for the database (`service.files.outage`) also carries `released`
    (the holders that gave up) and runs `countdown` seconds from now."""
    options: dict[str, Any] = {}
    if released:
        options["kwargs"] = {"released": released}
    if countdown is not None:
        options["countdown"] = countdown
    return send(
        names.PROCESS_FILE, args=[file_id], queue=names.QUEUE_FILES, settings=settings, **options
    )


def index_file(file_id: str, *, settings: Settings | None = None) -> str:
    """`index_file(file_id)` on the `files` queue (a ready file moved into a project)."""
    return send(names.INDEX_FILE, args=[file_id], queue=names.QUEUE_FILES, settings=settings)


def compact_conversation(
    conversation_id: str, job_id: str | None, *, settings: Settings | None = None
) -> str:
    """`compact_conversation(conversation_id, job_id)` on the `history` queue."""
    return send(
        names.COMPACT_CONVERSATION,
        args=[conversation_id, job_id],
        queue=names.QUEUE_HISTORY,
        settings=settings,
    )


def deliver_webhook(
    delivery_id: str, *, settings: Settings | None = None, countdown: float | None = None
) -> str:
    """`deliver_webhook(delivery_id)` on the `history` queue, `countdown` seconds from now
    (a retry; kept below the visibility timeout, or it would be delivered twice)."""
    options: dict[str, Any] = {} if countdown is None else {"countdown": countdown}
    return send(
        names.DELIVER_WEBHOOK,
        args=[delivery_id],
        queue=names.QUEUE_HISTORY,
        settings=settings,
        **options,
    )


def after_commit(
    session: Session,
    send_fn: Callable[..., object],
    *args: Any,
    on_error: Callable[[Exception], None] | None = None,
    **kwargs: Any,
) -> None:
    """Call `send_fn(*args, **kwargs)` once `session` commits; drop it on rollback.

    A publish that fails is logged and passed to `on_error` (for instance to mark a
    job failed); it never reaches the caller of `commit()`."""
    session.info.setdefault(_PENDING, []).append((send_fn, args, kwargs, on_error))


def now_or_log(
    send_fn: Callable[..., object],
    *args: Any,
    on_error: Callable[[Exception], None] | None = None,
    **kwargs: Any,
) -> bool:
    """Publish outside any transaction (sweeps, after their own commits). True if sent."""
    try:
        send_fn(*args, **kwargs)
    except Exception as exc:
        name = getattr(send_fn, "__name__", "task")
        log.warning("could not enqueue %s%s: %s; a sweep will retry", name, args, exc)
        if on_error is not None:
            try:
                on_error(exc)
            except Exception:
                log.exception("on_error handler of %s failed", name)
        return False
    return True


@event.listens_for(Session, "after_commit")
def _run_pending(session: Session) -> None:
    pending = session.info.pop(_PENDING, None)
    for send_fn, args, kwargs, on_error in pending or ():
        now_or_log(send_fn, *args, on_error=on_error, **kwargs)


@event.listens_for(Session, "after_rollback")
def _drop_pending(session: Session) -> None:
    session.info.pop(_PENDING, None)


def reset() -> None:
    """Close and forget producers (tests switch brokers)."""
    with _lock:
        apps = list(_apps.values())
        _apps.clear()
    for app in apps:
        with contextlib.suppress(Exception):  # best effort on teardown
            app.close()
