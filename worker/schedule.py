"""Beat schedule: the files recovery sweep, the storage sweep, plus the history service's
entries.

Run exactly one beat. Each entry carries `expires`, so a backlog of sweeps
never piles up; the sweep itself takes every row with a conditional update,
so two overlapping runs never enqueue the same file twice.
"""

from __future__ import annotations

import importlib
from typing import Any

from contextq.settings import Settings
from worker import names


def beat_schedule(settings: Settings) -> dict[str, Any]:
    interval = settings.RECOVERY_SWEEP_INTERVAL_S
    schedule: dict[str, Any] = {
        "recover-files": {
            "task": names.RECOVER_FILES,
            "schedule": interval,
            "options": {"queue": names.QUEUE_FILES, "expires": max(1.0, interval * 0.9)},
        },
        "sweep-blobs": {
            "task": names.SWEEP_BLOBS,
            "schedule": settings.BLOB_SWEEP_INTERVAL_S,
            "options": {
                "queue": names.QUEUE_FILES,
                "expires": max(1.0, settings.BLOB_SWEEP_INTERVAL_S * 0.9),
            },
        },
    }
    try:
        history = importlib.import_module("worker.schedule_history")
    except ModuleNotFoundError as exc:
        if exc.name != "worker.schedule_history":
            raise
    else:
        schedule.update(history.history_beat_schedule(settings))
    return schedule
