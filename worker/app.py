"""The Celery app. `celery -A worker.app worker` or `contextq worker`."""

from __future__ import annotations

from celery import Celery

from contextq.settings import get_settings
from worker.config import celery_config


def create_app() -> Celery:
    settings = get_settings()
    app = Celery("contextq")
    app.conf.update(celery_config(settings))
    app.conf.imports = ["tasks.files", "tasks.history", "tasks.events"]
    from worker import observe, schedule, signals  # noqa: F401  (metrics, liveness; fork hooks)

    app.conf.beat_schedule = schedule.beat_schedule(settings)
    return app


app = create_app()
