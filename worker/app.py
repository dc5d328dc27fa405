"""The Celery app. `contextq worker` (`python -P -m worker -A worker.app worker`)."""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.loaders.app import AppLoader

from contextq.settings import get_settings
from worker import observe, schedule, signals  # noqa: F401  (metrics, liveness; fork hooks)
from worker.config import celery_config


class OwnCodeLoader(AppLoader):
    """Celery's loader, importing the task modules from `sys.path` as it is: Celery's own
    puts the working directory first for each import, so a `tasks/` package of the
    directory `contextq up` runs in would be imported in place of ours
    (docs/operations.md#how-contextq-up-runs-the-stack)."""

    def import_from_cwd(self, module: str, imp: Any = None, package: str | None = None) -> Any:
        return (imp or self.import_module)(module, package=package)


def create_app() -> Celery:
    settings = get_settings()
    # no fix-ups: Celery's only one (Django's) imports the settings module that
    # DJANGO_SETTINGS_MODULE names, from the working directory
    app = Celery("contextq", loader=OwnCodeLoader, fixups=[])
    app.conf.update(celery_config(settings))
    app.conf.imports = ["tasks.files", "tasks.history", "tasks.events"]
    app.conf.beat_schedule = schedule.beat_schedule(settings)
    return app


app = create_app()
