"""Logging for every contextq process (API, worker, beat), configured from settings.

`LOG_LEVEL` (INFO) and `LOG_FORMAT`: `text` (one readable line) or `json` (one JSON
object per line, written by python-json-logger: a `logging.Formatter`, so every
library that logs through the standard `logging` module — uvicorn, Celery, SQLAlchemy,
our `contextq.*` loggers — comes out in the same form without being rewired).

The API stores the id of the request being served in `REQUEST_ID`; a filter on the
handler copies it onto every record written while that request runs (threadpool
calls included: anyio copies the context into its worker threads).

Stdlib and python-json-logger only: the engine, the API, the worker and the CLI all
import this module.
"""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar
from typing import IO, Literal

from pythonjsonlogger.json import JsonFormatter

LogFormat = Literal["text", "json"]

REQUEST_ID: ContextVar[str | None] = ContextVar("contextq_request_id", default=None)

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"
JSON_FIELDS = ("levelname", "name", "process", "message")
JSON_RENAMES = {"levelname": "level", "name": "logger"}

# Loggers that servers give handlers of their own; they go through ours instead, so a
# process writes one format. uvicorn's access logger is silenced: the API writes its own
# access line (route template, duration, request id) from `api.middleware`.
SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.asgi", "celery", "celery.task")
SILENCED_LOGGERS = ("uvicorn.access",)

_OURS = "_contextq_handler"


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to a record written while a request is being served."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = REQUEST_ID.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True


class TextFormatter(logging.Formatter):
    """`TEXT_FORMAT`, with ` [request_id=…]` at the end of a line written for a request."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        request_id = getattr(record, "request_id", None)
        return f"{line} [request_id={request_id}]" if request_id else line


def make_formatter(fmt: LogFormat) -> logging.Formatter:
    if fmt == "json":
        return JsonFormatter(
            list(JSON_FIELDS),
            rename_fields=JSON_RENAMES,
            timestamp="time",  # ISO 8601, UTC
            json_ensure_ascii=False,
        )
    return TextFormatter(TEXT_FORMAT)


def configure_logging(
    *,
    level: str = "INFO",
    fmt: LogFormat = "text",
    stream: IO[str] | None = None,
    force: bool = True,
) -> bool:
    """One handler on the root logger (stdout by default) at `level` in `fmt`.

    With `force=False` it behaves like `logging.basicConfig`: when something else
    already put a handler on the root logger (a test runner, an embedding application),
    it leaves logging alone and returns False. Calling it again replaces its own handler.
    """
    root = logging.getLogger()
    foreign = [h for h in root.handlers if not getattr(h, _OURS, False)]
    if foreign and not force:
        return False
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    setattr(handler, _OURS, True)
    handler.setFormatter(make_formatter(fmt))
    handler.addFilter(RequestIdFilter())
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in SERVER_LOGGERS:
        server_logger = logging.getLogger(name)
        server_logger.handlers.clear()
        server_logger.setLevel(logging.NOTSET)
        server_logger.propagate = True
    for name in SILENCED_LOGGERS:
        silenced = logging.getLogger(name)
        silenced.handlers.clear()
        silenced.propagate = False
    return True
