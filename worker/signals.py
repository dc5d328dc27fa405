"""Worker process hooks.

- In the main worker process (`worker_init`, before the pool forks): build the
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

from celery.signals import worker_init, worker_process_init

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before onnxruntime can load

log = logging.getLogger("contextq.worker")

GiB = 1024**3


def address_space_limit_bytes(max_memory_mb: int) -> int:
    return max(4 * max_memory_mb * 1024 * 1024, 8 * GiB)


def _set_rlimit(max_memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    limit = address_space_limit_bytes(max_memory_mb)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


@worker_init.connect
def _warm_up(**_kw: object) -> None:
    try:
        warm_up()
    except Exception:  # the children build them on first use instead
        log.exception("warm-up failed; continuing")


def warm_up() -> None:
    """Build what the first file would otherwise pay for (~0.8 s: tokenizers, the fast
    counter, encoding detection) once, before the pool forks."""
    import tempfile
    from pathlib import Path

    import psutil  # noqa: F401 - claim holder identity

    from contextq import tokens
    from contextq.files.pipeline import default_registry, process_file
    from contextq.settings import get_settings

    tokens.get_encoding()
    default_registry()
    settings = get_settings()
    with tempfile.TemporaryDirectory(prefix="contextq-warmup-") as tmp:
        for name, data in (("warm.txt", b"warm up\n" * 20), ("warm.py", b"x = 1\n" * 5)):
            path = Path(tmp) / name
            path.write_bytes(data)
            process_file(path, name, settings=settings)


@worker_process_init.connect
def _child_init(**_kw: object) -> None:
    from contextq.settings import get_settings
    from store.db import dispose_after_fork

    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    dispose_after_fork()
    _set_rlimit(get_settings().WORKER_MAX_MEMORY_MB)
