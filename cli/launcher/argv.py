"""The command line of each part, shared by `contextq up` and the single-part commands.

Logging is configured inside each part from `LOG_LEVEL` / `LOG_FORMAT` (see
`contextq.logs`): the API's processes through `api.asgi`, uvicorn's supervisor (the
parent of `--workers N`, which never imports the app) through `--log-config`, the
worker and beat through Celery's signals. In JSON mode Celery's banners (printed, not
logged) are turned off with `--quiet`, so every line of a part's output is a JSON object.

Every part runs contextq's own code whatever directory it is started from
(docs/operations.md#how-contextq-up-runs-the-stack): a user's project often holds `api/`, `tasks/`
or `worker/` packages of its own.

- `-P` (Python's safe-path mode) keeps the working directory off `sys.path`, in the part
  and in what it spawns (uvicorn's `--workers` processes inherit the flag);
- uvicorn puts its `--app-dir` first on `sys.path` (the working directory when not
  given): it is given, the directory contextq's packages are in;
- Celery imports the `-A` app and the task modules with the working directory first for
  the time of each import: `python -m worker` imports our app before Celery looks for
  it, and the app's loader imports the task modules from `sys.path` as it is
  (`worker.app.OwnCodeLoader`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from contextq.logs import UVICORN_LOG_CONFIG

QUEUES = "files,history"
ASGI_APP = "api.asgi:app"  # api.main's app, with logging configured before uvicorn logs
# the directory `api`, `worker`, `cli` … were imported from (a checkout, or site-packages)
CODE_ROOT = Path(__file__).resolve().parents[2]


def python_module(module: str) -> list[str]:
    """`python -P -m MODULE`: the working directory never joins `sys.path`."""
    return [sys.executable, "-P", "-m", module]


def api_argv(
    host: str, port: int, extra: list[str] | None = None, *, workers: int = 1
) -> list[str]:
    """uvicorn; with `workers` > 1 its supervisor runs that many API processes on the one
    socket (each counts into DATA_DIR/metrics, and revocations reach each through Redis)."""
    return [
        *python_module("uvicorn"),
        ASGI_APP,
        "--app-dir",  # first on sys.path; uvicorn's default is the working directory
        str(CODE_ROOT),
        "--host",
        host,
        "--port",
        str(port),
        "--timeout-graceful-shutdown",
        "5",
        # uvicorn's own lines (the supervisor's "Started parent process", "Child process
        # died") in our format: its handler factory configures logging from settings
        "--log-config",
        str(UVICORN_LOG_CONFIG),
        "--no-access-log",  # the API writes its own access line (route, duration, request id)
        # longer than clients keep an idle connection (httpx: 5 s): a server closing a kept
        # connection just as the client reuses it makes that request fail (seen under load)
        "--timeout-keep-alive",
        "30",
        *(["--workers", str(workers)] if workers > 1 else []),
        *(extra or []),
    ]


def _celery(*, quiet: bool) -> list[str]:
    """The `celery` command over our app (`worker/__main__.py`)."""
    return [*python_module("worker"), "-A", "worker.app", *(["--quiet"] if quiet else [])]


def worker_argv(
    concurrency: int,
    *,
    queues: str = QUEUES,
    nodename: str | None = None,
    quiet: bool = False,
    extra: list[str] | None = None,
) -> list[str]:
    argv = [
        *_celery(quiet=quiet),
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        str(concurrency),
        "--queues",
        queues,
    ]
    if nodename:
        argv += ["--hostname", nodename]
    return argv + list(extra or [])


def beat_argv(
    schedule: Path, pidfile: Path, *, quiet: bool = False, extra: list[str] | None = None
) -> list[str]:
    return [
        *_celery(quiet=quiet),
        "beat",
        "--schedule",
        str(schedule),
        "--pidfile",
        str(pidfile),
        *(extra or []),
    ]


def flower_argv(address: str, port: int, extra: list[str] | None = None) -> list[str]:
    # basic auth travels in FLOWER_BASIC_AUTH (see devkey.flower_env), not on the command
    # line where `ps` would show the password
    return [
        *_celery(quiet=False),
        "flower",
        f"--address={address}",
        f"--port={port}",
        *(extra or []),
    ]
