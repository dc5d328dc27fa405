"""A real contextq stack for your own tests: `contextq up` on a temporary directory.

As a context manager:

    from contextq.testing import running_stack
    with running_stack() as stack:
        file = stack.client.files.upload(b"hello", filename="a.txt", wait=True)

As pytest fixtures (registered by the `pytest11` entry point, or import them into a
conftest): `contextq_stack` (one stack per session) and `contextq_client` (a `Client`
on it). It starts the whole stack (embedded Valkey, SQLite, API, worker, beat, Flower)
on free ports, waits until `/healthz` reports a live worker, and stops every process
(SIGTERM to the process group, then SIGKILL) when done. Nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from contextq.secret_files import DEV_KEY_FILE, read_secret
from contextq_client import Client

START_TIMEOUT_S = 150.0
STOP_TIMEOUT_S = 30.0
# settings of the caller's environment that would point the stack elsewhere
INHERITED_OUT = ("REDIS_URL", "DATABASE_URL", "CONTEXTQ_API_URL", "CONTEXTQ_API_KEY", "DATA_DIR")


class StackStartError(RuntimeError):
    """`contextq up` exited or did not become ready in time; the message has its log."""


@dataclass
class RunningStack:
    """A running `contextq up`: its URL, the development key it made, and a `Client`."""

    process: subprocess.Popen[bytes]
    base_url: str
    api_key: str
    data_dir: Path
    log_path: Path
    client: Client = field(init=False)

    def __post_init__(self) -> None:
        self.client = Client(self.base_url, api_key=self.api_key)

    def new_client(self, **kwargs: Any) -> Client:
        return Client(self.base_url, api_key=self.api_key, **kwargs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def code_root() -> str:
    """The directory this `contextq` package was imported from: the stack runs the same
    code as the caller (a checkout on sys.path, not another installed copy)."""
    return str(Path(__file__).resolve().parent.parent)


def _environment(data_dir: Path, env: Mapping[str, str] | None) -> dict[str, str]:
    merged = {k: v for k, v in os.environ.items() if k not in INHERITED_OUT}
    merged["DATA_DIR"] = str(data_dir)
    inherited = merged.get("PYTHONPATH")
    merged["PYTHONPATH"] = code_root() + (os.pathsep + inherited if inherited else "")
    merged.update(env or {})
    return merged


def _log_tail(path: Path, chars: int = 4000) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")[-chars:]
    return ""


def _wait_ready(
    process: subprocess.Popen[bytes], base_url: str, data_dir: Path, log_path: Path, timeout: float
) -> str:
    """The development key once `/healthz` answers 200 (a live worker included)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StackStartError(
                f"contextq up exited with {process.returncode}:\n{_log_tail(log_path)}"
            )
        key = read_secret(data_dir / DEV_KEY_FILE)
        if key:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base_url}/healthz", timeout=2.0).status_code == 200:
                    return key
        time.sleep(0.2)
    raise StackStartError(f"contextq up not ready after {timeout:.0f}s:\n{_log_tail(log_path)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOP_TIMEOUT_S)


@contextlib.contextmanager
def running_stack(
    *,
    data_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    concurrency: int = 1,
    api_workers: int = 1,
    timeout: float = START_TIMEOUT_S,
) -> Iterator[RunningStack]:
    """Start `contextq up` on free ports (in `data_dir`, else a temporary directory
    removed afterwards), yield it once ready, stop every process on exit. `env` adds
    settings (e.g. `{"MAX_CONTEXT_TOKENS": "4000"}`)."""
    with contextlib.ExitStack() as cleanup:
        if data_dir is None:
            data_dir = cleanup.enter_context(tempfile.TemporaryDirectory(prefix="contextq-"))
        root = Path(data_dir)
        root.mkdir(parents=True, exist_ok=True)
        port, flower_port = free_port(), free_port()
        log_path = root / "up.log"
        argv = [sys.executable, "-m", "cli.main", "up", "--port", str(port)]
        argv += ["--flower-port", str(flower_port), "--concurrency", str(concurrency)]
        argv += ["--api-workers", str(api_workers)]
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                argv,
                env=_environment(root, env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=code_root(),
            )
        cleanup.callback(_stop, process)
        base_url = f"http://127.0.0.1:{port}"
        key = _wait_ready(process, base_url, root, log_path, timeout)
        stack = RunningStack(process, base_url, key, root, log_path)
        cleanup.callback(stack.client.close)
        yield stack


try:
    import pytest
except ImportError:  # pragma: no cover - the fixtures need pytest; the context manager not
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.fixture(scope="session")
    def contextq_stack() -> Iterator[RunningStack]:
        """A real `contextq up` for the test session."""
        with running_stack() as stack:
            yield stack

    @pytest.fixture
    def contextq_client(contextq_stack: RunningStack) -> Iterator[Client]:
        """A `Client` on the session's stack (closed after the test)."""
        with contextq_stack.new_client() as client:
            yield client
