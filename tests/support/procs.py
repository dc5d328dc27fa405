"""Subprocesses that tests start and always reap.

Each process runs in its own session (process group), writes stdout+stderr to
a log file, and is killed as a group on `stop()`/`kill()`, so pool children
of a Celery worker never outlive the test.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from tests.support import PROJECT_ROOT, VENV_BIN

T = TypeVar("T")

# every ManagedProcess started and not yet stopped (the session finalizer reaps leftovers)
LIVE: set[ManagedProcess] = set()


def wait_until(
    fn: Callable[[], T], *, timeout: float = 30.0, interval: float = 0.05, what: str = "condition"
) -> T:
    """Call `fn` until it returns something truthy; return it. TimeoutError after `timeout`."""
    deadline = time.monotonic() + timeout
    last: T = fn()
    while not last:
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
        time.sleep(interval)
        last = fn()
    return last


def executable(name: str) -> str:
    """A console script of the project venv (falls back to the current interpreter's dir)."""
    for base in (VENV_BIN, Path(sys.executable).parent):
        candidate = base / name
        if candidate.exists():
            return str(candidate)
    return name


class ManagedProcess:
    """A subprocess in its own process group whose output goes to `log_path`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        log_path: Path,
        name: str = "proc",
        cwd: Path = PROJECT_ROOT,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.log_path = log_path
        self.name = name
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    # lifecycle -------------------------------------------------------------
    def start(self) -> ManagedProcess:
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError(f"{self.name} already running")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._log_offset = log.tell()
            self.proc = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        LIVE.add(self)
        return self

    def start_and_wait(self, wait: Callable[[], object]) -> None:
        """Start, then run `wait`; if waiting fails, the process is stopped before raising."""
        ManagedProcess.start(self)
        try:
            wait()
        except BaseException:
            self.stop(timeout=3)
            raise

    @property
    def pid(self) -> int:
        assert self.proc is not None, f"{self.name} not started"
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole process group (the process and every child it forked)."""
        LIVE.discard(self)
        if self.proc is None:
            return
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self.proc = None

    def stop(self, timeout: float = 10.0, sig: int = signal.SIGTERM) -> None:
        """Ask politely (SIGTERM to the group), then SIGKILL the group."""
        LIVE.discard(self)
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.signal_group(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=timeout)
        # whatever is left in the group (pool children) goes too
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.proc = None

    # logs ------------------------------------------------------------------
    def log(self, *, since_start: bool = False) -> str:
        try:
            data = self.log_path.read_bytes()
        except FileNotFoundError:
            return ""
        if since_start:
            data = data[self._log_offset :]
        return data.decode("utf-8", "replace")

    def wait_for_log(self, pattern: str, *, timeout: float = 30.0) -> re.Match[str]:
        """Wait for a regex in the output of the current run; fail early if the process died."""
        rx = re.compile(pattern)

        def check() -> re.Match[str] | None:
            match = rx.search(self.log(since_start=True))
            if match is None and not self.alive():
                raise RuntimeError(
                    f"{self.name} exited (rc={self.proc.returncode if self.proc else None}) "
                    f"before logging {pattern!r}:\n{self.log(since_start=True)[-4000:]}"
                )
            return match

        try:
            return wait_until(check, timeout=timeout, interval=0.05, what=f"{self.name}: {pattern}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n--- {self.name} log ---\n{self.log()[-4000:]}") from None

    def __enter__(self) -> ManagedProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def reap_all() -> None:
    """Stop every process a test left running (safety net for the session end)."""
    for proc in list(LIVE):
        proc.stop(timeout=3)


def free_port(host: str = "127.0.0.1") -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
