"""Supervision of `contextq up`'s parts (docs/operations.md#running-the-service).

A part that dies (worker, beat, Flower, API, broker) is started again with the same
command line after a backoff: 1 s, then 2, 4, 8 … up to 30 s while it keeps dying
(the backoff starts again at 1 s once a run lasted 5 minutes). Each restart writes one
line (on `up`'s stderr and in DATA_DIR/logs/up.log). The fifth death of one part
within 5 minutes means it cannot run here: `up` gives up, says why with the last lines
of the part's log, stops everything and exits 1.

The parts do not depend on each other to stay up: the API keeps answering while the
worker is down (uploads wait in the broker's queue), Celery reconnects to a restarted
broker, and a restarted broker replays its AOF on the same port with the same password.
"""

from __future__ import annotations

import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from cli.launcher.processes import Child, LaunchError, ProcessTable, tail


@dataclass(frozen=True)
class RestartPolicy:
    max_deaths: int = 5  # of one part within `window_s`: then give up
    window_s: float = 300.0
    first_delay_s: float = 1.0
    max_delay_s: float = 30.0
    stable_s: float = 300.0  # a run this long resets the backoff

    def delay_s(self, streak: int) -> float:
        """Backoff before a restart: doubles with each death in a row, capped."""
        exponent = max(0, streak - 1)
        return float(min(self.max_delay_s, self.first_delay_s * 2**exponent))


@dataclass
class DeathLog:
    """When one part died (within the policy's window), and its deaths in a row."""

    policy: RestartPolicy
    times: deque[float] = field(default_factory=deque)
    streak: int = 0

    def record(self, now: float, ran_for_s: float) -> int:
        """Note a death at `now` after a run of `ran_for_s`; the number of deaths within the
        window, this one included."""
        self.streak = 1 if ran_for_s >= self.policy.stable_s else self.streak + 1
        self.times.append(now)
        while self.times and self.times[0] <= now - self.policy.window_s:
            self.times.popleft()
        return len(self.times)


class GaveUp(LaunchError):
    """A part died too often; the message says which and how."""


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} s"


@dataclass
class Supervisor:
    """Restarts dead parts of a `ProcessTable`; call `check()` a few times a second."""

    table: ProcessTable
    report: Callable[[str], None]
    policy: RestartPolicy = field(default_factory=RestartPolicy)
    clock: Callable[[], float] = time.monotonic
    deaths: dict[str, DeathLog] = field(default_factory=dict)
    restart_at: dict[str, float] = field(default_factory=dict)

    def check(self) -> None:
        """Note new deaths, restart the parts whose backoff is over; raise GaveUp."""
        now = self.clock()
        for child in self.table.children:
            due = self.restart_at.get(child.name)
            if due is not None:
                if now >= due:
                    del self.restart_at[child.name]
                    self._restart(child)
            elif child.returncode is not None:
                self._on_death(child, child.returncode, now)
        self.table.reap_orphans()

    def _on_death(self, child: Child, returncode: int, now: float) -> None:
        log = self.deaths.setdefault(child.name, DeathLog(self.policy))
        count = log.record(now, ran_for_s=now - child.started_at)
        how = describe_exit(returncode)
        if count >= self.policy.max_deaths:
            raise GaveUp(
                f"{child.name} died {count} times within {_minutes(self.policy.window_s)} "
                f"(last: {how}); giving up. Last lines of {child.log_path}:\n"
                f"{tail(child.log_path)}"
            )
        delay = self.policy.delay_s(log.streak)
        self.restart_at[child.name] = now + delay
        self.report(
            f"{child.name} exited unexpectedly ({how}); restarting it in {delay:g}s "
            f"(death {count} within {_minutes(self.policy.window_s)}; "
            f"up gives up at {self.policy.max_deaths})"
        )

    def _restart(self, child: Child) -> None:
        child.kill_group()  # whatever the dead leader left behind (pool children)
        try:
            child.start()
        except OSError as exc:
            raise GaveUp(f"{child.name} could not be started again: {exc}") from exc
