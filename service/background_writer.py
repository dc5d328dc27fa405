"""Work done after a request, off its path: one daemon thread per process that runs
`work(key, value)` for each submitted key, coalescing submissions of a key still waiting
(the last value wins). Used for files rewritten after a commit (the private-data
checkpoint), where only the newest state matters and a burst of changes should cost one
write, not one per change.

`flush(timeout)` waits until nothing is pending or running (tests, and at interpreter
exit so a stopping API writes what its last requests changed). A forked child starts
empty (the parent keeps and writes its own pending work).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

log = logging.getLogger("contextq.background")


class BackgroundWriter:
    def __init__(self, work: Callable[[Any, Any], None], *, name: str) -> None:
        self._work = work
        self._name = name
        self._reset()
        os.register_at_fork(after_in_child=self._reset)
        atexit.register(self.flush, 2.0)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._pending: dict[Hashable, Any] = {}
        self._busy = 0
        self._thread: threading.Thread | None = None

    def submit(self, key: Hashable, value: Any) -> None:
        with self._cond:
            self._pending[key] = value
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()  # the writer thread, whoever else waits (flush)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until nothing is pending or running; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    self._cond.wait()
                key = next(iter(self._pending))
                value = self._pending.pop(key)
                self._busy += 1
            try:
                self._work(key, value)
            except Exception:
                log.exception("%s: work on %r failed", self._name, key)
            finally:
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()
