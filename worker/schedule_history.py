"""Beat entries of the history service (merged into `worker/schedule.py`'s schedule)."""

from __future__ import annotations

from typing import Any

from contextq.settings import Settings
from worker import names


def history_beat_schedule(settings: Settings) -> dict[str, Any]:
    """The compaction sweep every COMPACTION_SWEEP_INTERVAL_S; a run left in the queue
    longer than one interval expires (the next one does the same work)."""
    interval = settings.COMPACTION_SWEEP_INTERVAL_S
    return {
        "sweep-compactions": {
            "task": names.SWEEP_COMPACTIONS,
            "schedule": interval,
            "options": {"queue": names.QUEUE_HISTORY, "expires": max(1.0, interval)},
        }
    }
