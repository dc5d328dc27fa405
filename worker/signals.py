"""Worker process hooks.

- Logging (`setup_logging`, in the worker, beat and every `celery -A worker.app`
  process; in the worker already at `celeryd_init`, so its "running as root" warning is
  a log line too): configured from `LOG_LEVEL` / `LOG_FORMAT` by `contextq.logs` instead
  of Celery's own setup, which would replace the root handler with its format; the
  lines Celery prints past logging at shutdown are logged instead, and sys.stdout and
  sys.stderr are redirected to logging as Celery's own setup would. Celery's
  `--loglevel` is therefore not used: LOG_LEVEL is (`contextq worker --loglevel X`
  sets it). The worker and beat then log the docs/history.md#history-strategies start line.
- In the main worker process (`worker_init`, before the pool forks): check the blob
  store (`store.blobs.check_blob_store`: a missing bucket, refused credentials or an
  unreachable endpoint stop the worker with the reason), then build the
  tokenizer and the processor registry once, so every child shares them
  copy-on-write instead of rebuilding per task (DESIGN habit 7).
- In each pool child (`worker_process_init`): drop inherited DB connections
  (`dispose_after_fork`) and cap the address space with RLIMIT_AS.

RLIMIT_AS limits *virtual* memory. onnxruntime (markitdown's magika), numpy
and OpenBLAS reserve large virtual arenas they never touch, so a cap near the
real RSS budget makes plain imports fail. The cap is therefore
max(4 x WORKER_MAX_MEMORY_MB, 8 GiB): a backstop that turns a runaway
allocation (decompression bombs, huge parses) into MemoryError — which the
engine reports as a failed file — instead of the OOM killer. The RSS budget
itself is enforced by Celery's `worker_max_memory_per_child` (the child is
replaced after the task that grew it), and a child killed outright is counted
by the attempts on the row.
"""

from __future__ import annotations

import logging
import os
import resource
import sys
import tempfile
from pathlib import Path

from celery import current_app
from celery.signals import (
    beat_init,
    celeryd_after_setup,
    celeryd_init,
    setup_logging,
    worker_init,
    worker_process_init,
)

from contextq.logs import configure_logging
from contextq.settings import get_settings
from contextq.startup import log_context_management
from store.blobs import BlobStoreUnavailable, check_blob_store

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before onnxruntime can load

log = logging.getLogger("contextq.worker")

GiB = 1024**3


def address_space_limit_bytes(max_memory_mb: int) -> int:
    return max(4 * max_memory_mb * 1024 * 1024, 8 * GiB)


def _set_rlimit(max_memory_mb: int) -> None:
    limit = address_space_limit_bytes(max_memory_mb)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


@celeryd_init.connect  # the worker, before Celery warns about running as root
@setup_logging.connect
def _configure_logging(**_kw: object) -> None:
    settings = get_settings()
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # our handler writes to the real one
    configure_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT)
    _log_what_celery_says()
    _redirect_stdouts()


def _redirect_stdouts() -> None:
    """What Celery does itself (`worker_redirect_stdouts`) unless, as here, the
    `setup_logging` signal takes over its setup: writes to sys.stdout and sys.stderr —
    prints, and the traceback billiard writes when a pool child finds its parent gone
    ("Process ForkPoolWorker-2:") — become WARNING lines of `celery.redirected`."""
    # ours: worker.app's; a level name, as Celery itself writes it to CELERY_LOG_REDIRECT_LEVEL
    current_app.log.redirect_stdouts(loglevel="WARNING")  # type: ignore[arg-type]


def _log_what_celery_says() -> None:
    """Celery writes its shutdown lines ("worker: Warm shutdown (MainProcess)", the Ctrl-C
    hints) straight to the terminal with `safe_say`, past logging: they become lines of
    the `celery.apps.worker` logger, in the process's format."""
    import celery.apps.worker as celery_worker  # noqa: PLC0415 - the worker's, not beat's

    def say(message: str, _stream: object = None) -> None:
        logging.getLogger("celery.apps.worker").info("%s", message.strip())

    celery_worker.safe_say = say  # type: ignore[attr-defined]  # not in celery-types' stubs


def _log_start() -> None:
    log_context_management(get_settings())


@beat_init.connect
def _beat_started(**_kw: object) -> None:
    _log_start()


@celeryd_after_setup.connect  # the worker's logging is configured by then
def _worker_started(**_kw: object) -> None:
    _log_start()


@worker_init.connect
def _check_blob_store(**_kw: object) -> None:
    """A misconfigured blob store stops the worker at start, not at its first file."""
    try:
        check_blob_store()
    except BlobStoreUnavailable as exc:
        log.critical("cannot start: %s", exc)
        raise SystemExit(f"contextq worker: {exc}") from None  # past Celery's signal guard


@worker_init.connect
def _warm_up(**_kw: object) -> None:
    try:
        warm_up()
    except Exception:  # the children build them on first use instead
        log.exception("warm-up failed; continuing")


def warm_up() -> None:
    """Build what the first file would otherwise pay for (~1.2 s: tokenizers, the fast
    counter, encoding detection, project search's embedding model) once, before the pool
    forks (the model is only loaded here: its tokenizer's threads start in the children)."""
    # the worker's warm-up alone: beat and Flower import this module too, and need none
    # of the file engine, numpy or the embedding model
    import psutil  # noqa: F401, PLC0415 - claim holder identity

    from contextq import tokens  # noqa: PLC0415
    from contextq.files.pipeline import default_registry, process_file  # noqa: PLC0415
    from contextq.retrieval import embedding  # noqa: PLC0415

    tokens.get_encoding()
    default_registry()
    embedding.embedder()
    settings = get_settings()
    with tempfile.TemporaryDirectory(prefix="contextq-warmup-") as tmp:
        for name, data in (("warm.txt", b"warm up\n" * 20), ("warm.py", b"x = 1\n" * 5)):
            path = Path(tmp) / name
            path.write_bytes(data)
            process_file(path, name, settings=settings)


@worker_process_init.connect
def _child_init(**_kw: object) -> None:
    from store.db import dispose_after_fork  # noqa: PLC0415 - SQLAlchemy: not in beat

    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    dispose_after_fork()
    _set_rlimit(get_settings().WORKER_MAX_MEMORY_MB)
