"""Operations use cases (docs/operations.md#running-the-service): the health report and a metrics
scrape.

Both read the world as it is now (database, broker) in short reads of their own and
never raise for an unavailable part: they say so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily, Metric
from sqlalchemy import text

from contextq.history.types import FORMAT_NAMES
from contextq.settings import Settings
from contextq.strategy_options import STRATEGY_NAMES
from store import broker_state, metrics
from store import files_queries as q
from store.db import read_engine, read_session
from store.redis_clients import redis_client
from store.tables import FileStatus
from worker import names

log = logging.getLogger("contextq.ops")

FILE_STATUSES = (FileStatus.UPLOADED, FileStatus.PROCESSING, FileStatus.READY, FileStatus.FAILED)


@dataclass(frozen=True)
class Health:
    database: str
    broker: str
    workers: str  # ok | none (within the grace period) | unavailable | unknown
    live_workers: int | None

    @property
    def ok(self) -> bool:
        return self.database == self.broker == "ok" and self.workers in ("ok", "none")

    def as_dict(self) -> dict[str, object]:
        return {
            "database": self.database,
            "broker": self.broker,
            "workers": self.workers,
            "live_workers": self.live_workers,
        }


def _database() -> str:
    try:
        with read_engine().connect() as conn:  # a deferred BEGIN: never the write lock
            conn.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:
        log.warning("healthz: database: %s", exc)
        return "unavailable"


def _broker(url: str | None) -> str:
    if not url:
        return "not configured"
    try:
        redis_client(url, timeout_s=1.0).ping()
        return "ok"
    except Exception as exc:
        log.warning("healthz: broker: %s", exc)
        return "unavailable"


def _workers(url: str, *, grace_s: float, since: float) -> tuple[str, int | None]:
    """Live workers in the broker's view; "none" while the newest heartbeat (or `since`,
    when this process started after it) is within the grace period, then "unavailable"."""
    try:
        seen = broker_state.workers(url)
    except Exception as exc:
        log.warning("healthz: worker heartbeats: %s", exc)
        return "unknown", None
    if seen.live:
        return "ok", seen.live
    last = max(seen.last_seen or 0.0, since)
    return ("none" if time.time() - last <= grace_s else "unavailable"), 0


def health(*, settings: Settings, started_at: float) -> Health:
    """GET /healthz: 200 when the database and broker answer and a worker is live (or
    was within HEALTH_WORKER_GRACE_S, counted from `started_at` at the earliest)."""
    database = _database()
    broker = _broker(settings.REDIS_URL)
    workers, live = "unknown", None
    if broker == "ok" and settings.REDIS_URL:
        workers, live = _workers(
            settings.REDIS_URL, grace_s=settings.HEALTH_WORKER_GRACE_S, since=started_at
        )
    return Health(database, broker, workers, live)


# --- a metrics scrape ---------------------------------------------------------------------
def _files_by_status() -> Iterable[Metric]:
    with read_session() as session:
        counts = q.count_by_status(session)
    gauge = GaugeMetricFamily("contextq_files", "files by status", labels=["status"])
    for status in sorted({*FILE_STATUSES, *counts}):
        gauge.add_metric([status], counts.get(status, 0))
    return [gauge]


def _queues(url: str) -> Iterable[Metric]:
    depths, unacked = broker_state.queue_depths(url, names.QUEUES)
    depth = GaugeMetricFamily(
        "contextq_queue_depth", "messages waiting in each queue", labels=["queue"]
    )
    for queue, n in depths.items():
        depth.add_metric([queue], n)
    delivered = GaugeMetricFamily(
        "contextq_queue_unacked", "messages delivered to a worker and not yet acknowledged"
    )
    delivered.add_metric([], unacked)
    live = GaugeMetricFamily(
        "contextq_live_workers", "workers whose heartbeat the broker saw in the last 10 s"
    )
    live.add_metric([], broker_state.workers(url).live)
    return [depth, delivered, live]


def count_from_zero() -> None:
    """The API's start: every known series at 0, so every family is in the first scrape
    (docs/operations.md#running-the-service): compactions, quota refusals, blob deletions, each
    task's duration, each strategy and format's context builds, the polled routes' requests."""
    metrics.zero_known_series(
        task_names=names.TASKS, strategies=STRATEGY_NAMES, formats=FORMAT_NAMES
    )


def scrape_metrics(*, settings: Settings) -> bytes:
    """The Prometheus exposition of every process's counts plus the gauges read now."""
    sources: dict[str, metrics.Reading] = {"database": _files_by_status}
    url = settings.REDIS_URL
    if url:
        sources["broker"] = lambda: _queues(url)
    return metrics.render(metrics.ScrapeCollector(sources))
