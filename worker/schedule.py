"""Beat schedule: the files recovery sweep, the storage sweep, the compaction sweep and the
events sweep (expired events out, webhook deliveries that are due sent).

Run exactly one beat. Each entry carries `expires`, so a backlog of sweeps never
piles up (the next run does the same work); each sweep is safe to overlap with
another: the files sweep takes every row with a conditional update, the compaction
sweep skips conversations with a job under way and the compaction lock does the rest.
"""

from __future__ import annotations

from typing import Any

from contextq.settings import Settings
from worker import names


def beat_schedule(settings: Settings) -> dict[str, Any]:
    recovery = settings.RECOVERY_SWEEP_INTERVAL_S
    compaction = settings.COMPACTION_SWEEP_INTERVAL_S
    events = settings.EVENTS_SWEEP_INTERVAL_S
    return {
        "recover-files": {
            "task": names.RECOVER_FILES,
            "schedule": recovery,
            "options": {"queue": names.QUEUE_FILES, "expires": max(1.0, recovery * 0.9)},
        },
        "sweep-compactions": {
            "task": names.SWEEP_COMPACTIONS,
            "schedule": compaction,
            "options": {"queue": names.QUEUE_HISTORY, "expires": max(1.0, compaction)},
        },
        "sweep-blobs": {
            "task": names.SWEEP_BLOBS,
            "schedule": settings.BLOB_SWEEP_INTERVAL_S,
            "options": {
                "queue": names.QUEUE_FILES,
                "expires": max(1.0, settings.BLOB_SWEEP_INTERVAL_S * 0.9),
            },
        },
        "embed-missing": {  # chunk sets indexed before hybrid search get their vectors
            "task": names.EMBED_MISSING,
            "schedule": recovery,
            "options": {"queue": names.QUEUE_FILES, "expires": max(1.0, recovery * 0.9)},
        },
        "sweep-events": {
            "task": names.SWEEP_EVENTS,
            "schedule": events,
            "options": {"queue": names.QUEUE_HISTORY, "expires": max(1.0, events * 0.9)},
        },
    }
