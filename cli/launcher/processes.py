"""The processes `contextq up` owns: each part a direct child in its own process group.

* Ctrl-C in a terminal reaches only the launcher, which then stops the parts in order
  (worker before Valkey, so a warm shutdown can still requeue);
* each child gets ``PR_SET_PDEATHSIG`` (SIGTERM) on Linux and the launcher is a child
  subreaper, so even a SIGKILLed launcher leaves no server behind, and orphaned
  grandchildren (Celery pool processes) come back to be reaped;
* stop = SIGTERM to every group, wait, SIGKILL the stragglers, reap.

A `Child` can be started again after it died (`start()` spawns the same command line):
that is what the supervisor does.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

from contextq.logs import LogFormat, format_line

LOCK_FILE = "up.lock"
UP_LOGGER = "contextq.up"  # the launcher's own lines (up.log, and each start in a part's log)

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class LaunchError(Exception):
    """A part could not start or stopped answering; the message says which."""


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - not Linux
        return None


def _child_setup(parent_pid: int) -> Callable[[], None]:
    libc = _libc()

    def setup() -> None:  # runs in the child between fork and exec
        os.setpgid(0, 0)
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent_pid:  # the launcher died before prctl took effect
                os.kill(os.getpid(), signal.SIGTERM)

    return setup


def become_subreaper() -> None:
    libc = _libc()
    if libc is not None:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


@dataclass
class Child:
    """One part: its command line, and the process running it (replaced on restart)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    stop_order: int  # lower stops first
    cwd: Path | None = None
    before_start: Callable[[], None] | None = None
    log_format: LogFormat = "text"  # of the line marking each start in the part's log
    note: Callable[[str], None] | None = None  # the launcher's own log (up.log)
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0

    @property
    def pgid(self) -> int:
        assert self.proc is not None, f"{self.name} never started"
        return self.proc.pid  # each child leads its own group

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def start(self) -> None:
        if self.before_start is not None:
            self.before_start()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.cwd,
                preexec_fn=_child_setup(os.getpid()),  # noqa: PLW1509  (setpgid + prctl only)
                close_fds=True,
            )
            # where this run starts, in the part's own format (a JSON line under
            # LOG_FORMAT=json); the part writes nothing before its interpreter is up
            message = f"started {self.name} (pid {self.proc.pid})"
            log.write(f"{format_line(self.log_format, UP_LOGGER, message)}\n".encode())
        self.started_at = time.monotonic()
        if self.note is not None:
            self.note(message)

    def kill_group(self) -> None:
        """SIGKILL what is left of the group (pool children of a dead worker) and reap it."""
        if self.proc is None:
            return
        signal_group(self.pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)


@dataclass
class ProcessTable:
    """Starts children in their own process groups and stops every one of them."""

    log_dir: Path
    env: dict[str, str]
    children: list[Child] = field(default_factory=list)
    subreaper: bool = True  # off only where this process is not a launcher (a test runner)
    log_format: LogFormat = "text"
    note: Callable[[str], None] | None = None  # each start, in the launcher's own log

    def __post_init__(self) -> None:
        self.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.subreaper:
            become_subreaper()

    def spawn(
        self,
        name: str,
        argv: list[str],
        *,
        stop_order: int,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        before_start: Callable[[], None] | None = None,
    ) -> Child:
        child = Child(
            name=name,
            argv=argv,
            env={**self.env, **(env or {})},
            log_path=self.log_dir / f"{name}.log",
            stop_order=stop_order,
            cwd=cwd,
            before_start=before_start,
            log_format=self.log_format,
            note=self.note,
        )
        child.start()
        self.children.append(child)
        return child

    def get(self, name: str) -> Child | None:
        return next((c for c in self.children if c.name == name), None)

    def dead(self) -> list[Child]:
        return [c for c in self.children if c.returncode is not None]

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM each group in order, wait, SIGKILL stragglers; reap everything."""
        for order in sorted({c.stop_order for c in self.children}):
            batch = [c for c in self.children if c.stop_order == order and c.proc is not None]
            for child in batch:
                signal_group(child.pgid, signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            for child in batch:
                assert child.proc is not None
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            for child in batch:
                # SIGKILL the group even when the leader is gone: its pool children may remain
                child.kill_group()
            self._wait_groups_empty([c.pgid for c in batch], timeout=5.0)
        self.reap_orphans()

    def _wait_groups_empty(self, pgids: list[int], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.reap_orphans()
            if not any(group_alive(p) for p in pgids):
                return
            for pgid in pgids:
                signal_group(pgid, signal.SIGKILL)
            time.sleep(0.05)

    def reap_orphans(self) -> None:
        """Reap exited grandchildren that came back to us as subreaper.

        Only processes that are not our own parts: waiting on a part here would steal its
        exit code from its Popen object.
        """
        ours = {c.proc.pid for c in self.children if c.proc is not None}
        with contextlib.suppress(psutil.Error):
            for proc in psutil.Process().children():
                if proc.pid in ours:
                    continue
                with contextlib.suppress(psutil.Error, ChildProcessError):
                    if proc.status() == psutil.STATUS_ZOMBIE:
                        os.waitpid(proc.pid, os.WNOHANG)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def tail(path: Path, lines: int = 20) -> str:
    try:
        data = path.read_bytes()[-16384:]
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """One `contextq up` per DATA_DIR (two would run two beats over one schedule)."""
    fh: IO[str] = open(data_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise LaunchError(
                    f"another `contextq up` is already running with DATA_DIR={data_dir}"
                ) from exc
            raise
        fh.truncate(0)
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield
    finally:
        fh.close()
