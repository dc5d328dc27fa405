"""A per-process buffer of events recorded on a hot path (the context read).

`buffer(write).add(event)` appends to a deque (about a microsecond, no I/O); a
daemon thread hands what has gathered to `write` every FLUSH_INTERVAL_S, or at once past
FLUSH_AT events (`service.events` passes its writer: one transaction, then publish).
The read that caused an event never waits on the database for it.

Bounded: past MAX_PENDING unwritten events (a database down for a while) the oldest
are dropped, counted and logged. A failed write is retried with the next batch. The
API flushes at shutdown (`flush`), and an exiting process tries once more (atexit).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

log = logging.getLogger("contextq.events")

FLUSH_INTERVAL_S = 0.2
FLUSH_AT = 200
MAX_PENDING = 20_000

T = TypeVar("T")
Write = Callable[[list[T]], None]  # a batch written in one transaction, then published

_lock = threading.Lock()
_buffers: dict[int, EventBuffer[Any]] = {}  # per process id: a forked child builds its own


class EventBuffer(Generic[T]):
    def __init__(self, write: Write[T]) -> None:
        self._write = write
        self.pending: deque[T] = deque()
        self.dropped = 0
        self._wake = threading.Event()
        self._idle = threading.Condition()
        self._writing = False
        self._thread = threading.Thread(target=self._run, name="contextq-events", daemon=True)
        self._thread.start()

    def add(self, event: T) -> None:
        if len(self.pending) >= MAX_PENDING:
            self.pending.popleft()
            self.dropped += 1
        self.pending.append(event)
        if len(self.pending) >= FLUSH_AT:
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait(FLUSH_INTERVAL_S)
            self._wake.clear()
            self.write_pending()

    def write_pending(self) -> None:
        """Write everything gathered so far (called by the thread, and by `flush`)."""
        with self._idle:
            while self._writing:
                self._idle.wait()
            self._writing = True
        try:
            while self.pending:
                batch = [self.pending.popleft() for _ in range(min(len(self.pending), 1000))]
                try:
                    self._write(batch)
                except Exception:
                    log.warning("could not write %d event(s); retrying", len(batch), exc_info=True)
                    self.pending.extendleft(reversed(batch))
                    time.sleep(FLUSH_INTERVAL_S)
                    return
            if self.dropped:
                log.error("dropped %d event(s): the database was unavailable", self.dropped)
                self.dropped = 0
        finally:
            with self._idle:
                self._writing = False
                self._idle.notify_all()


def buffer(write: Write[T]) -> EventBuffer[T]:
    """This process's buffer, started on first use with `write` (one writer per process:
    `service.events`')."""
    pid = os.getpid()
    current = _buffers.get(pid)
    if current is not None:
        return current
    with _lock:
        current = _buffers.get(pid)
        if current is None:
            current = _buffers[pid] = EventBuffer(write)
        return current


def flush() -> None:
    """Write this process's buffered events now (shutdown, tests)."""
    current = _buffers.get(os.getpid())
    if current is not None:
        current.write_pending()


atexit.register(flush)
