"""What a `process_file` task does while the database is away
(docs/operations.md#running-the-service: a file accepted before an outage still ends `ready`).

Every database step of the task (the claim, the project check, the result write) waits
the outage out (`store.db.retry_unavailable`), each for up to a quarter of the soft time
limit and never past DB_WAIT_SHARE of it in all, so the task is still inside its time
limit when it stops waiting. A database still away then: the task hands the file on
instead of failing with the claim it may hold. It publishes `process_file` again,
HAND_ON_COUNTDOWN_S from now, naming itself as a `Release`; the next claim resumes the
row at once even if this process's claim landed unseen, and that task waits again. So a
file in flight never sits claimed by a process that has stopped working on it: it ends
`ready` within about RETRY_MAX_DELAY_S of the database's return, however long the outage.

Only when the broker refuses the message too (both away at once), or after MAX_RELEASES
hand-ons in a row, does the task raise; then the row is taken back by the recovery
sweep once its lease expires (TASK_TIME_LIMIT_S + LEASE_MARGIN_S after the claim).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from contextq.settings import Settings
from service import enqueue
from service.files.claims import MAX_RELEASES, Release, worker_identity
from store.db import retry_unavailable
from store.tables import utcnow

log = logging.getLogger("contextq.files")
T = TypeVar("T")

DB_WAIT_SHARE = 0.9  # of the soft time limit: the waits end before it, with time to hand on
HAND_ON_COUNTDOWN_S = 1.0  # the next delivery's first try; it then backs off 0.5 s → 5 s


@dataclass(frozen=True)
class DatabaseWaits:
    """How long one task's database steps may wait for an unavailable database."""

    step_s: float  # one step: a quarter of the soft time limit
    until: float  # time.monotonic() past which no step waits any longer

    @classmethod
    def for_task(cls, settings: Settings) -> DatabaseWaits:
        soft = settings.TASK_SOFT_TIME_LIMIT_S
        return cls(step_s=soft / 4, until=time.monotonic() + soft * DB_WAIT_SHARE)

    def run(self, fn: Callable[[], T], *, what: str) -> T:
        """`fn()` (one transaction, safe to run again), waiting while the database is
        unavailable; raises the database's error once this step may wait no longer."""
        budget = max(0.0, min(self.step_s, self.until - time.monotonic()))
        return retry_unavailable(fn, budget_s=budget, what=what)


def hand_on(
    file_id: str,
    *,
    released: Sequence[Release],
    error: Exception,
    settings: Settings,
) -> str:
    """Publish `process_file` for a file this task gave up on, naming this process among
    the releases; returns the outcome to report. Raises `error` when it cannot."""
    releases = [*released, Release(worker_identity(), utcnow())]
    if len(releases) > MAX_RELEASES:
        log.error(
            "file %s: database still unavailable after %d hand-ons (%s); the recovery sweep "
            "takes the file back once its lease expires",
            file_id,
            len(released),
            error,
        )
        raise error
    try:
        enqueue.process_file(
            file_id,
            settings=settings,
            released=[r.as_message() for r in releases],
            countdown=HAND_ON_COUNTDOWN_S,
        )
    except Exception as exc:
        log.error(
            "file %s: database unavailable (%s) and the broker too (%s); the recovery sweep "
            "takes the file back once its lease expires",
            file_id,
            error,
            exc,
        )
        raise error from exc
    log.warning(
        "file %s handed on (hand-on %d, next try in %.0fs): database still unavailable: %s",
        file_id,
        len(releases),
        HAND_ON_COUNTDOWN_S,
        error,
    )
    return "handed_on"
