"""Logging for every contextq process (API, worker, beat), configured from settings.

`LOG_LEVEL` (INFO) and `LOG_FORMAT`: `text` (one readable line) or `json` (one JSON
object per line, written by python-json-logger: a `logging.Formatter`, so every
library that logs through the standard `logging` module — uvicorn, Celery, SQLAlchemy,
our `contextq.*` loggers — comes out in the same form without being rewired).

The API stores the id of the request being served in `REQUEST_ID`; a filter on the
handler copies it onto every record written while that request runs (threadpool
calls included: anyio copies the context into its worker threads).

What would otherwise reach the process's output unformatted goes through the same
handler: Python warnings (`logging.captureWarnings`: Celery's "running as root"), records
of loggers that have no handler and do not propagate (billiard's "Process … exited with
signal 9", through `logging.lastResort`), and, in JSON mode, uncaught exceptions of the
main thread and of other threads (`sys.excepthook`, `threading.excepthook`). uvicorn's
supervisor process, which never imports the app, is configured by the same code through
`uvicorn --log-config` (`UVICORN_LOG_CONFIG`, whose handler factory is
`handler_from_settings`). `format_line` writes a line of another process (the launcher's
marker in a part's log) in the same form.

Stdlib and python-json-logger only: the engine, the API, the worker and the CLI all
import this module.
"""

from __future__ import annotations

import logging
import sys
import threading
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import IO, Literal

from pythonjsonlogger.json import JsonFormatter

from contextq.settings import get_settings

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
# uvicorn's attribute with the message in ANSI colours: noise in a log file
_UNWANTED_ATTRIBUTES = ("color_message",)
# the dictConfig file `uvicorn --log-config` reads (its handler is `handler_from_settings`)
UVICORN_LOG_CONFIG = Path(__file__).with_name("uvicorn_logging.json")


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to a record written while a request is being served (and tidies
    what third parties add: uvicorn's coloured copy of the message, a warning's newline)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = REQUEST_ID.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        for name in _UNWANTED_ATTRIBUTES:
            record.__dict__.pop(name, None)
        if record.name == "py.warnings" and isinstance(record.msg, str):
            record.msg = record.msg.rstrip("\n")  # warnings.formatwarning ends with one
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
    handler = _handler(fmt, stream)
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
    _capture_strays(fmt, stream)
    return True


def _handler(
    fmt: LogFormat, stream: IO[str] | None, level: int = logging.NOTSET
) -> logging.Handler:
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    setattr(handler, _OURS, True)
    handler.setLevel(level)
    handler.setFormatter(make_formatter(fmt))
    handler.addFilter(RequestIdFilter())
    return handler


def _capture_strays(fmt: LogFormat, stream: IO[str] | None) -> None:
    """Warnings, records of handler-less loggers and (JSON) uncaught exceptions: through
    a handler of ours, not printed raw to stderr."""
    logging.captureWarnings(True)
    logging.lastResort = _handler(fmt, stream, logging.WARNING)
    if fmt == "json":
        sys.excepthook = _log_uncaught
        threading.excepthook = _log_uncaught_in_thread


def _log_uncaught(
    kind: type[BaseException], error: BaseException, trace: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, error, trace)
        return
    logging.getLogger("contextq").critical("uncaught exception", exc_info=(kind, error, trace))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is None:
        return
    thread = args.thread.name if args.thread is not None else "?"
    logging.getLogger("contextq").critical(
        "uncaught exception in thread %s",
        thread,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def handler_from_settings() -> logging.Handler:
    """`uvicorn --log-config`'s handler factory (`UVICORN_LOG_CONFIG`): configures logging
    from settings, as every other part does, and hands dictConfig the handler it put on
    the root logger."""
    settings = get_settings()
    configure_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT)
    return logging.getLogger().handlers[0]


def format_line(fmt: LogFormat, logger: str, message: str, level: int = logging.INFO) -> str:
    """`message` as one line of `logger` in `fmt`, for a file this process does not log to
    (the launcher's marker in a part's log)."""
    record = logging.LogRecord(logger, level, __file__, 0, message, None, None)
    return make_formatter(fmt).format(record)
