"""Logging from settings, request ids and the access line, in process.

The real processes (`contextq up`) are checked in tests/test_cli_up.py; here the same
functions run against an in-memory stream so every field can be asserted.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api import errors
from api.main import ContextqAPI
from contextq.logs import (
    REQUEST_ID,
    SERVER_LOGGERS,
    SILENCED_LOGGERS,
    UVICORN_LOG_CONFIG,
    configure_logging,
    format_line,
)
from contextq.settings import Settings
from contextq.startup import context_management_line


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """Logging configured into a buffer; the root logger, server loggers, the warnings
    capture, logging's last resort and the exception hooks restored after."""
    root = logging.getLogger()
    names = [*SERVER_LOGGERS, *SILENCED_LOGGERS]
    saved = (
        list(root.handlers),
        root.level,
        {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).propagate) for n in names},
    )
    hooks = (logging.lastResort, sys.excepthook, threading.excepthook)
    buf = io.StringIO()
    try:
        yield buf
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        for name, (handlers, propagate) in saved[2].items():
            logging.getLogger(name).handlers[:] = handlers
            logging.getLogger(name).propagate = propagate
        logging.captureWarnings(False)
        logging.lastResort, sys.excepthook, threading.excepthook = hooks


def _records(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def test_json_lines_carry_level_logger_time_and_request_id(stream: io.StringIO) -> None:
    configure_logging(level="INFO", fmt="json", stream=stream)
    log = logging.getLogger("contextq.history")
    log.debug("not at INFO")
    log.info("outside a request → %d", 1)
    token = REQUEST_ID.set("rid-77")
    try:
        log.warning("inside a request")
    finally:
        REQUEST_ID.reset(token)
    first, second = _records(stream)
    assert first["message"] == "outside a request → 1" and "request_id" not in first
    assert first["level"] == "INFO" and first["logger"] == "contextq.history"
    assert first["time"].endswith("+00:00") and isinstance(first["process"], int)
    assert second["request_id"] == "rid-77" and second["level"] == "WARNING"


def test_text_lines_end_with_the_request_id(stream: io.StringIO) -> None:
    configure_logging(level="DEBUG", fmt="text", stream=stream)
    token = REQUEST_ID.set("rid-88")
    try:
        logging.getLogger("contextq.api").debug("hello")
    finally:
        REQUEST_ID.reset(token)
    line = stream.getvalue().strip()
    assert line.endswith(f" DEBUG contextq.api [{os.getpid()}] hello [request_id=rid-88]")


def test_server_loggers_go_through_ours_and_uvicorn_access_is_silenced(
    stream: io.StringIO,
) -> None:
    logging.getLogger("uvicorn").addHandler(logging.NullHandler())
    configure_logging(level="INFO", fmt="text", stream=stream)
    logging.getLogger("uvicorn.error").info("Started server process")
    logging.getLogger("uvicorn.access").info('127.0.0.1 - "GET / HTTP/1.1" 200')
    text = stream.getvalue()
    assert "INFO uvicorn.error" in text and "Started server process" in text
    assert "GET / HTTP" not in text, "the API writes its own access line"
    assert logging.getLogger("uvicorn").handlers == []


def test_not_forced_it_leaves_a_foreign_setup_alone(stream: io.StringIO) -> None:
    foreign = logging.StreamHandler(io.StringIO())
    logging.getLogger().handlers[:] = [foreign]
    assert configure_logging(fmt="json", stream=stream, force=False) is False
    assert logging.getLogger().handlers == [foreign]
    assert configure_logging(fmt="json", stream=stream, force=True) is True
    assert foreign not in logging.getLogger().handlers


def test_warnings_and_handlerless_loggers_come_out_as_json(stream: io.StringIO) -> None:
    """Celery's "running as root" warning and billiard's "Process … exited with signal 9"
    (a logger without handlers that does not propagate) used to be printed raw."""
    configure_logging(level="INFO", fmt="json", stream=stream)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        logging.captureWarnings(True)  # catch_warnings put the old showwarning back
        warnings.warn("You're running the worker as root", UserWarning, stacklevel=1)
    lonely = logging.getLogger("contextq.test.billiard-like")
    lonely.propagate = False
    try:
        lonely.error("Process %r pid:%d exited with %r", "ForkPoolWorker-1", 42, "signal 9")
        lonely.info("below the last resort's WARNING: not written")
    finally:
        lonely.propagate = True
    warning, billiard = _records(stream)
    assert warning["logger"] == "py.warnings" and warning["level"] == "WARNING"
    assert "UserWarning: You're running the worker as root" in warning["message"]
    assert not warning["message"].endswith("\n")
    assert billiard["logger"] == "contextq.test.billiard-like" and billiard["level"] == "ERROR"
    assert billiard["message"] == "Process 'ForkPoolWorker-1' pid:42 exited with 'signal 9'"


def test_uvicorns_colour_copy_of_the_message_is_dropped(stream: io.StringIO) -> None:
    configure_logging(level="INFO", fmt="json", stream=stream)
    logging.getLogger("uvicorn.error").info(
        "Started server process [7]", extra={"color_message": "Started server process [\x1b[36m7"}
    )
    (record,) = _records(stream)
    assert record["message"] == "Started server process [7]" and "color_message" not in record


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_uncaught_exceptions_are_json_lines_in_a_real_process() -> None:
    code = (
        "import threading\n"
        "from contextq.logs import configure_logging\n"
        "configure_logging(fmt='json')\n"
        "t = threading.Thread(target=lambda: 1 / 0, name='sweeper'); t.start(); t.join()\n"
        "raise ValueError('boom')\n"
    )
    done = _python(code)
    assert done.returncode == 1 and done.stderr == ""
    thread, main = [json.loads(line) for line in done.stdout.splitlines()]
    assert thread["message"] == "uncaught exception in thread sweeper"
    assert "ZeroDivisionError" in thread["exc_info"] and thread["level"] == "CRITICAL"
    assert main["message"] == "uncaught exception" and "ValueError: boom" in main["exc_info"]


def test_uvicorn_log_config_gives_the_supervisor_our_format() -> None:
    """What `uvicorn --log-config` does in the parent of `--workers N`, which never imports
    the app: dictConfig of the shipped file, then uvicorn's supervisor logs."""
    code = (
        "import json, logging, logging.config\n"
        "from contextq.logs import UVICORN_LOG_CONFIG\n"
        "logging.config.dictConfig(json.loads(UVICORN_LOG_CONFIG.read_text()))\n"
        "logging.getLogger('uvicorn.error').info('Started parent process [%d]', 1234)\n"
        "logging.getLogger('uvicorn.access').info('GET / 200')\n"
        "logging.getLogger('contextq.test').debug('below LOG_LEVEL')\n"
    )
    done = _python(code, LOG_FORMAT="json", LOG_LEVEL="INFO")
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["logger"] == "uvicorn.error" and record["level"] == "INFO"
    assert record["message"] == "Started parent process [1234]"
    text = _python(code, LOG_FORMAT="text", LOG_LEVEL="DEBUG")
    assert " INFO uvicorn.error [" in text.stdout and "DEBUG contextq.test" in text.stdout
    assert "GET / 200" not in text.stdout
    assert UVICORN_LOG_CONFIG.is_file() and UVICORN_LOG_CONFIG.suffix == ".json"


def test_format_line_writes_another_process_line() -> None:
    record = json.loads(format_line("json", "contextq.up", "started api (pid 7)"))
    assert (record["logger"], record["level"], record["message"]) == (
        "contextq.up",
        "INFO",
        "started api (pid 7)",
    )
    assert record["process"] == os.getpid() and record["time"].endswith("+00:00")
    text = format_line("text", "contextq.up", "started api (pid 7)")
    assert text.endswith(f" INFO contextq.up [{os.getpid()}] started api (pid 7)")


def test_log_settings_are_checked() -> None:
    assert Settings(LOG_LEVEL="debug", LOG_FORMAT="JSON").LOG_LEVEL == "DEBUG"
    assert Settings(LOG_FORMAT=" Json ").LOG_FORMAT == "json"
    with pytest.raises(ValidationError, match="LOG_FORMAT"):
        Settings(LOG_FORMAT="xml")
    with pytest.raises(ValidationError, match="LOG_LEVEL"):
        Settings(LOG_LEVEL="chatty")


def test_context_management_line() -> None:
    settings = Settings(LLM_PROVIDER="anthropic", MAX_CONTEXT_TOKENS=4000, MIN_MESSAGES_TO_KEEP=7)
    assert context_management_line(settings) == (
        "Context management initialized for provider=anthropic: max_tokens=4000, "
        "min_messages=7, auto_compression=True"
    )
    off = Settings(ENABLE_AUTO_COMPRESSION=False, MAX_CONTEXT_TOKENS=1234)
    assert context_management_line(off).endswith(
        "max_tokens=1234, min_messages=10, auto_compression=False"
    )


# -- the middleware on a real FastAPI app ------------------------------------------------------


def _app() -> ContextqAPI:
    app = ContextqAPI()
    errors.install(app)
    work_log = logging.getLogger("contextq.test.work")

    @app.get("/items/{item_id}")
    def work(item_id: str) -> dict[str, str]:  # sync: runs in the threadpool
        work_log.info("working on %s", item_id)
        return {"item": item_id}

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("unexpected")

    return app


def test_request_id_reaches_threadpool_lines_and_the_access_line(stream: io.StringIO) -> None:
    configure_logging(level="INFO", fmt="json", stream=stream)
    with TestClient(_app(), raise_server_exceptions=False) as client:
        resp = client.get("/items/secret-42", headers={"X-Request-ID": "rid-abc"})
        made = client.get("/items/7")
    assert resp.headers["X-Request-ID"] == "rid-abc"
    work = [r for r in _records(stream) if r["logger"] == "contextq.test.work"]
    assert [(r["message"], r["request_id"]) for r in work] == [
        ("working on secret-42", "rid-abc"),
        ("working on 7", made.headers["X-Request-ID"]),
    ]
    access = [r for r in _records(stream) if r["logger"] == "contextq.api.access"]
    assert len(access) == 2
    assert access[0]["route"] == "/items/{item_id}" and "secret-42" not in access[0]["message"]
    assert access[0]["method"] == "GET" and access[0]["status"] == 200
    assert access[0]["request_id"] == "rid-abc" and access[0]["duration_ms"] >= 0


def test_an_unexpected_error_still_answers_with_the_id(stream: io.StringIO) -> None:
    configure_logging(level="INFO", fmt="json", stream=stream)
    client = TestClient(_app(), raise_server_exceptions=False)
    resp = client.get("/boom", headers={"X-Request-ID": "rid-boom"})
    missing = client.get("/nowhere", headers={"X-Request-ID": "x" * 129})  # too long: replaced
    assert resp.status_code == 503 and resp.headers["X-Request-ID"] == "rid-boom"
    records = _records(stream)
    (error,) = [r for r in records if r["message"].startswith("unhandled error")]
    assert error["request_id"] == "rid-boom" and "RuntimeError" in error["exc_info"]
    access = {r["request_id"]: r for r in records if r["logger"] == "contextq.api.access"}
    assert access["rid-boom"]["status"] == 503
    new_id = missing.headers["X-Request-ID"]
    assert len(new_id) == 32 and access[new_id]["route"] == "<unmatched>"
    assert access[new_id]["status"] == 404
