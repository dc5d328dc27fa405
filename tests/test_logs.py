"""Logging from settings, request ids and the access line, in process.

The real processes (`contextq up`) are checked in tests/test_cli_up.py; here the same
functions run against an in-memory stream so every field can be asserted.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api import errors
from api.main import ContextqAPI
from contextq.logs import REQUEST_ID, SERVER_LOGGERS, SILENCED_LOGGERS, configure_logging
from contextq.settings import Settings
from contextq.startup import context_management_line


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """Logging configured into a buffer; the root logger and server loggers restored after."""
    root = logging.getLogger()
    names = [*SERVER_LOGGERS, *SILENCED_LOGGERS]
    saved = (
        list(root.handlers),
        root.level,
        {n: (list(logging.getLogger(n).handlers), logging.getLogger(n).propagate) for n in names},
    )
    buf = io.StringIO()
    try:
        yield buf
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        for name, (handlers, propagate) in saved[2].items():
            logging.getLogger(name).handlers[:] = handlers
            logging.getLogger(name).propagate = propagate


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
