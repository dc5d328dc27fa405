"""Prometheus metrics (docs/operations.md#running-the-service): what each process observes, and what
`GET /metrics` shows.

Every API process and every worker process (pool children included) counts into
prometheus-client's **multiprocess mode**: each process writes its samples to small
mmap files in `PROMETHEUS_MULTIPROC_DIR` (default `DATA_DIR/metrics`), and the API
process that serves a scrape merges all of them. Why this rather than publishing
through the broker:

- the API itself runs as several processes (uvicorn `--workers`): a scrape reaches one
  of them, and only a shared store gives the same answer whichever it is; the files are
  that store with no extra moving part;
- an observation costs a few microseconds (a write into a memory-mapped file), never a
  network round trip on the request or task path, and nothing is lost when the broker
  is down;
- `DATA_DIR` is already shared by every process of a deployment (blobs live there: under
  `contextq up` it is one directory, in compose the `blobs` volume every app container
  mounts), so worker metrics reach the API without a new channel. File names carry
  "<host>-<pid>", so containers whose pids collide never share a file.

Gauges that describe the world rather than one process (files by status, queue depth,
live workers) are read at scrape time from the database and the broker
(`ScrapeCollector`), not counted.

Every metric here has labels, so no sample would exist before the first observation:
a dashboard or an alert on compactions would find no series until one ran. The API
process therefore creates the series of every known label value at 0 when it starts
(`zero_known_series`, Prometheus' own advice), so every family is there from the first
scrape (docs/operations.md#running-the-service). A process calls `setup_multiprocess()` before it
observes anything (the API at import of its app, the worker in its first signal), and observations
made without it stay in the process (single-process mode, e.g. an in-process test client).
"""

from __future__ import annotations

import logging
import os
import re
import socket
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import REGISTRY

from contextq.settings import Settings

log = logging.getLogger("contextq.metrics")

ENV_DIR = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
TASK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

HTTP_REQUESTS = Histogram(
    "contextq_http_request_duration_seconds",
    "HTTP requests by method, route template and status: latency (its _count is the "
    "number of requests)",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
TASK_DURATION = Histogram(
    "contextq_task_duration_seconds",
    "Celery task run time in the worker, by task name and final state",
    ["task", "state"],
    buckets=TASK_BUCKETS,
)
CONTEXT_BUILD = Histogram(
    "contextq_context_build_duration_seconds",
    "GET /v1/conversations/{id}/context: time to build the answer (reads included), by "
    "strategy and format",
    ["strategy", "format"],
    buckets=LATENCY_BUCKETS,
)
COMPACTIONS = Counter(
    "contextq_compactions",
    "compaction runs by method (summary, truncation; none when nothing was written) and "
    "outcome (compacted, skipped, failed)",
    ["method", "outcome"],
)
QUOTA_REFUSALS = Counter(
    "contextq_quota_refusals",
    "requests answered 429, by the limit they hit",
    ["limit"],
)
BLOBS_DELETED = Counter(
    "contextq_blobs_deleted",
    "blobs the storage sweep deleted, by kind (blob: unreferenced, temp: abandoned upload)",
    ["kind"],
)


# the label values each family is known to take (its series start at 0)
COMPACTION_SERIES = (
    ("summary", "compacted"),
    ("truncation", "compacted"),
    ("none", "skipped"),
    ("none", "failed"),
)
QUOTA_LIMITS = ("MAX_FILES_PER_OWNER", "MAX_STORAGE_BYTES_PER_OWNER", "RATE_LIMIT_PER_MINUTE")
BLOB_KINDS = ("blob", "temp")
TASK_STATES = ("SUCCESS", "FAILURE")  # RETRY and the rarer ones appear when seen
# every deployment polls these two; other routes' series appear with their first status
POLLED_ROUTES = (("GET", "/healthz", "200"), ("GET", "/metrics", "200"))


# --- multiprocess mode -------------------------------------------------------------------
def _process_identifier() -> str:
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "host"
    return f"{host}-{os.getpid()}"


def default_dir(settings: Settings) -> Path:
    return settings.data_dir / "metrics"


def setup_multiprocess(settings: Settings) -> Path | None:
    """Count into files in PROMETHEUS_MULTIPROC_DIR (set to DATA_DIR/metrics when unset,
    so the processes this one starts inherit it). Returns the directory, or None when it
    cannot be used (the process then keeps its metrics to itself)."""
    raw = os.environ.get(ENV_DIR)
    directory = Path(raw) if raw else default_dir(settings)
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        log.warning("metrics stay in this process: cannot use %s (%s)", directory, exc)
        return None
    os.environ[ENV_DIR] = str(directory)
    if not getattr(values.ValueClass, "_multiprocess", False):
        values.ValueClass = values.MultiProcessValue(_process_identifier)  # type: ignore[no-untyped-call]
    return directory


def multiprocess_dir() -> Path | None:
    """The directory this process counts into, when it is in multiprocess mode."""
    raw = os.environ.get(ENV_DIR)
    if raw and getattr(values.ValueClass, "_multiprocess", False) and os.path.isdir(raw):
        return Path(raw)
    return None


def wipe(directory: Path) -> None:
    """Forget the counts of processes that are gone (`contextq up` calls it before it
    starts the parts: counters start from zero with the stack)."""
    if directory.is_dir():
        for path in directory.glob("*.db"):
            path.unlink(missing_ok=True)


# --- observations ---------------------------------------------------------------------------
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """`route` is a template or "<unmatched>"; any other method counts as OTHER, so a
    client cannot mint label values."""
    method = method if method in KNOWN_METHODS else "OTHER"
    HTTP_REQUESTS.labels(method, route, str(status)).observe(seconds)


def observe_context_build(answer: dict[str, Any]) -> None:
    """One context answer (its own `duration_ms`, reads included)."""
    seconds = float(answer.get("duration_ms") or 0.0) / 1000
    CONTEXT_BUILD.labels(str(answer.get("strategy")), str(answer.get("format"))).observe(seconds)


def compaction_labels(result: Any, *, failed: bool = False) -> tuple[str, str]:
    """(method, outcome) of a `compact_conversation` result: {"method": …} when it wrote
    a compaction, {"skipped": …} when it had nothing to do; `failed` when it raised."""
    if failed:
        return "none", "failed"
    if isinstance(result, dict) and result.get("method"):
        return str(result["method"]), "compacted"
    return "none", "skipped"


def observe_compaction(result: Any, *, failed: bool = False) -> None:
    COMPACTIONS.labels(*compaction_labels(result, failed=failed)).inc()


def zero_known_series(
    *, task_names: Iterable[str], strategies: Iterable[str], formats: Iterable[str]
) -> None:
    """Create every known series at 0 (creating a child writes its zero into this
    process's multiprocess file, which every scrape merges)."""
    for labels in COMPACTION_SERIES:
        COMPACTIONS.labels(*labels)
    for limit in QUOTA_LIMITS:
        QUOTA_REFUSALS.labels(limit)
    for kind in BLOB_KINDS:
        BLOBS_DELETED.labels(kind)
    for task in task_names:
        for state in TASK_STATES:
            TASK_DURATION.labels(task, state)
    formats = tuple(formats)
    for strategy in strategies:
        for fmt in formats:
            CONTEXT_BUILD.labels(strategy, fmt)
    for route in POLLED_ROUTES:
        HTTP_REQUESTS.labels(*route)


# --- a scrape ---------------------------------------------------------------------------------
Reading = Callable[[], Iterable[Metric]]


class ScrapeCollector:
    """Gauges read when scraped. A source that fails (database or broker down) is left
    out and counted in `contextq_scrape_errors{source}`: the scrape itself never fails."""

    def __init__(self, sources: dict[str, Reading]) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Metric]:
        errors = GaugeMetricFamily(
            "contextq_scrape_errors",
            "1 when a source of this scrape could not be read",
            labels=["source"],
        )
        for name, read in self.sources.items():
            try:
                metrics = list(read())
            except Exception as exc:
                log.warning("metrics: %s could not be read: %s", name, exc)
                errors.add_metric([name], 1)
                continue
            errors.add_metric([name], 0)
            yield from metrics
        yield errors


class _Merged:
    def __init__(self, *collectors: Any) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.collect()


def render(scrape: ScrapeCollector) -> bytes:
    """The exposition text: every process's counts (merged from the multiprocess files,
    or this process's own registry) and the scrape-time gauges."""
    directory = multiprocess_dir()
    if directory is not None:
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=str(directory))  # type: ignore[no-untyped-call]
    else:
        counted = REGISTRY
    return generate_latest(_Merged(counted, scrape))
