"""JSON responses of the history routes, serialised once with orjson."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson
from fastapi import Response
from pydantic import BaseModel


def json_response(data: Any, status_code: int = 200) -> Response:
    """orjson straight to bytes: datetimes as ISO 8601, models dumped without a second
    validation pass (FastAPI would validate `response_model` again). JSON a client sent
    may hold integers past 64 bits, which orjson refuses: those go through `json`."""
    if isinstance(data, BaseModel):
        data = data.model_dump()
    try:
        body = orjson.dumps(data, option=orjson.OPT_NAIVE_UTC, default=_dump)
    except orjson.JSONEncodeError:
        body = json.dumps(data, default=_plain, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(body, status_code=status_code, media_type="application/json")


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return _dump(value)
