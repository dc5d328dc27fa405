"""The app as a server runs it: `uvicorn api.asgi:app` (what `contextq api` and `up` run).

Logging is configured from settings (`LOG_LEVEL`, `LOG_FORMAT`) when uvicorn imports
this module, before uvicorn writes its first line, so every line of the process has
one format. With `--workers N` uvicorn's supervisor never imports it: `contextq api`
and `up` give uvicorn `--log-config` (`contextq.logs.UVICORN_LOG_CONFIG`), which runs
the same configuration in every uvicorn process. `uvicorn api.main:app` works too; it
configures logging a little later, at application start-up.
"""

from __future__ import annotations

from contextq.logs import configure_logging
from contextq.settings import get_settings

_settings = get_settings()
configure_logging(level=_settings.LOG_LEVEL, fmt=_settings.LOG_FORMAT)

from api.main import app  # noqa: E402  (after logging is configured)

__all__ = ["app"]
