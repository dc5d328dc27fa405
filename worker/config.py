"""Celery configuration derived from Settings (DESIGN habit 13)."""

from __future__ import annotations

from typing import Any

from kombu import Exchange, Queue

from contextq.settings import Settings
from worker import names


def broker_url(settings: Settings) -> str:
    if not settings.REDIS_URL:
        raise RuntimeError(
            "REDIS_URL is not set: run `contextq up` (which starts an embedded Valkey) "
            "or point REDIS_URL at a Redis/Valkey server"
        )
    return settings.REDIS_URL


def celery_config(settings: Settings) -> dict[str, Any]:
    url = broker_url(settings)
    # a killed worker's unacked message comes back after the visibility timeout:
    # keep it above the hard time limit so a running task is never redelivered
    # (tests lower it with BROKER_VISIBILITY_TIMEOUT_S to see redelivery quickly)
    visibility_timeout = settings.broker_visibility_timeout_s
    transport = {
        "visibility_timeout": visibility_timeout,
        # how often the worker looks for abandoned messages: kombu's default period is
        # ~100 s (10 s x throttle 10); scan every min(10 s, vt/4) instead (one ZRANGE)
        "unacked_restore_interval": max(1, min(10, visibility_timeout // 4)),
        "unacked_restore_throttle": 1,
    }
    return {
        "broker_url": url,
        "result_backend": url,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"visibility_timeout": visibility_timeout},
        "result_expires": 3600,
        # JSON only: a pickled message is refused
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        # at-least-once delivery; tasks are idempotent (status guard + attempts on the row)
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "task_soft_time_limit": settings.TASK_SOFT_TIME_LIMIT_S,
        "task_time_limit": settings.TASK_TIME_LIMIT_S,
        "worker_max_memory_per_child": settings.WORKER_MAX_MEMORY_MB * 1024,  # KiB
        # declared queues only
        "task_queues": [Queue(q, Exchange(q, type="direct"), routing_key=q) for q in names.QUEUES],
        "task_default_queue": names.QUEUE_FILES,
        "task_create_missing_queues": False,
        "task_routes": {
            names.PROCESS_FILE: {"queue": names.QUEUE_FILES},
            names.INDEX_FILE: {"queue": names.QUEUE_FILES},
            names.RECOVER_FILES: {"queue": names.QUEUE_FILES},
            names.SWEEP_BLOBS: {"queue": names.QUEUE_FILES},
            names.EMBED_MISSING: {"queue": names.QUEUE_FILES},
            names.NOOP: {"queue": names.QUEUE_FILES},
            names.COMPACT_CONVERSATION: {"queue": names.QUEUE_HISTORY},
            names.SWEEP_COMPACTIONS: {"queue": names.QUEUE_HISTORY},
            names.DELIVER_WEBHOOK: {"queue": names.QUEUE_HISTORY},
            names.SWEEP_EVENTS: {"queue": names.QUEUE_HISTORY},
        },
        # progress lives in the row (DESIGN habit 4): no STARTED writes to the backend
        "task_track_started": False,
        "worker_send_task_events": True,  # Flower
        # no "task-sent" event per enqueue: it cost the API ~6% of its CPU per upload, and
        # Flower sees every task from the worker's own received/started/succeeded events
        "task_send_sent_event": False,
        "worker_hijack_root_logger": False,
        "timezone": "UTC",
        "enable_utc": True,
    }
