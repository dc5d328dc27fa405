"""The real Celery worker and beat as subprocesses (`celery -A worker.app ...`).

w = CeleryWorker(stack, log_dir=tmp_path).start()   # waits for "ready."
w.pool_pids()        # the prefork children
w.kill_child()       # SIGKILL one pool child (the main process survives)
w.kill()             # SIGKILL the whole worker (main + children)
w.stop()             # warm shutdown, then SIGKILL the group
"""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Sequence
from pathlib import Path

import psutil

from tests.support.procs import ManagedProcess, executable, wait_until
from tests.support.stack import StackEnv

_seq = itertools.count(1)


class CeleryWorker(ManagedProcess):
    def __init__(
        self,
        stack: StackEnv,
        *,
        log_dir: Path,
        queues: Sequence[str] = ("files", "history"),
        concurrency: int = 1,
        name: str | None = None,
        extra_args: Sequence[str] = (),
        loglevel: str = "INFO",
    ) -> None:
        if loglevel.upper() not in ("INFO", "DEBUG"):
            raise ValueError("readiness is read from the INFO log line 'ready.': use INFO/DEBUG")
        self.node = name or f"w{next(_seq)}-{os.getpid()}"
        argv = [
            executable("celery"),
            "-A",
            "worker.app",
            "worker",
            "--without-mingle",
            "--without-gossip",
            "-P",
            "prefork",
            "-c",
            str(concurrency),
            "-Q",
            ",".join(queues),
            "-n",
            f"{self.node}@%h",
            "-l",
            loglevel,
            *extra_args,
        ]
        super().__init__(
            argv,
            env=stack.subprocess_env(),
            log_path=log_dir / f"worker-{self.node}.log",
            name=f"worker {self.node}",
        )

    def start(self, *, wait: bool = True, timeout: float = 60.0) -> CeleryWorker:
        if wait:
            self.start_and_wait(lambda: self.wait_ready(timeout=timeout))
        else:
            super().start()
        return self

    def wait_ready(self, *, timeout: float = 60.0) -> None:
        self.wait_for_log(r"\bready\.", timeout=timeout)
        wait_until(self.pool_pids, timeout=timeout, what="worker pool children")

    def pool_pids(self) -> list[int]:
        if not self.alive():
            return []
        try:
            children = psutil.Process(self.pid).children()
        except psutil.NoSuchProcess:
            return []
        return [c.pid for c in children if c.status() != psutil.STATUS_ZOMBIE]

    def kill_child(self, pid: int | None = None) -> int:
        """SIGKILL one pool child (the first one unless `pid` is given); returns its pid."""
        pid = pid or self.pool_pids()[0]
        os.kill(pid, signal.SIGKILL)
        return pid

    def restart(self, *, timeout: float = 60.0) -> CeleryWorker:
        self.stop()
        return self.start(timeout=timeout)


class CeleryBeat(ManagedProcess):
    def __init__(self, stack: StackEnv, *, log_dir: Path, loglevel: str = "INFO") -> None:
        n = next(_seq)
        schedule = log_dir / f"celerybeat-schedule-{n}"
        argv = [
            executable("celery"),
            "-A",
            "worker.app",
            "beat",
            "-s",
            str(schedule),
            "-l",
            loglevel,
        ]
        super().__init__(
            argv, env=stack.subprocess_env(), log_path=log_dir / f"beat-{n}.log", name="beat"
        )

    def start(self, *, wait: bool = True, timeout: float = 60.0) -> CeleryBeat:
        if wait:
            self.start_and_wait(lambda: self.wait_for_log(r"beat: Starting", timeout=timeout))
        else:
            super().start()
        return self
