"""What the worker reports (docs/operations.md#running-the-service), through Celery's signals:

- task durations and compaction outcomes into the multiprocess metrics files
  (`store.metrics`), set up in the main worker process before the pool forks, so every
  pool child counts into DATA_DIR/metrics where the API reads them;
- its liveness: each Celery heartbeat (every 2 s, main process) is recorded in the
  broker (`store.broker_state`), which /healthz and /metrics read; a clean shutdown
  removes it at once.

Nothing here may fail a task or the worker: a metrics or broker error is logged.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery.signals import (
    heartbeat_sent,
    task_postrun,
    task_prerun,
    worker_init,
    worker_shutting_down,
)

from contextq.settings import get_settings
from store import broker_state, metrics
from worker import names

log = logging.getLogger("contextq.worker")

_started: dict[str, float] = {}
_stopping: set[str] = set()  # nodes shutting down: a last heartbeat must not re-add them


@worker_init.connect
def _setup_metrics(**_kw: Any) -> None:
    metrics.setup_multiprocess(get_settings())


@task_prerun.connect
def _task_started(task_id: str | None = None, **_kw: Any) -> None:
    if task_id:
        _started[task_id] = time.perf_counter()


@task_postrun.connect
def _task_finished(
    task_id: str | None = None,
    task: Any = None,
    retval: Any = None,
    state: str | None = None,
    **_kw: Any,
) -> None:
    started = _started.pop(task_id or "", None)
    name = getattr(task, "name", None) or "unknown"
    try:
        if started is not None:
            metrics.TASK_DURATION.labels(name, state or "UNKNOWN").observe(
                time.perf_counter() - started
            )
        if name == names.COMPACT_CONVERSATION:
            metrics.observe_compaction(retval, failed=state == "FAILURE")
    except Exception:
        log.warning("could not count task %s", name, exc_info=True)


@heartbeat_sent.connect
def _heartbeat(sender: Any = None, **_kw: Any) -> None:
    url = get_settings().REDIS_URL
    node = getattr(getattr(sender, "eventer", None), "hostname", None)
    if not url or not node or node in _stopping:
        return
    try:
        broker_state.record_heartbeat(url, node)
    except Exception as exc:
        log.debug("could not record the heartbeat of %s: %s", node, exc)


@worker_shutting_down.connect
def _forget(sender: Any = None, **_kw: Any) -> None:
    url = get_settings().REDIS_URL
    if not url or not sender:
        return
    _stopping.add(str(sender))
    try:
        broker_state.forget_worker(url, str(sender))
    except Exception as exc:
        log.debug("could not remove %s from the live workers: %s", sender, exc)
