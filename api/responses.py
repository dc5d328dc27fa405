"""JSON responses of the history routes, serialised once with orjson."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Response
from pydantic import BaseModel


def json_response(data: Any, status_code: int = 200) -> Response:
    """orjson straight to bytes: datetimes as ISO 8601, models dumped without a second
    validation pass (FastAPI would validate `response_model` again)."""
    if isinstance(data, BaseModel):
        data = data.model_dump()
    body = orjson.dumps(data, option=orjson.OPT_NAIVE_UTC, default=_dump)
    return Response(body, status_code=status_code, media_type="application/json")


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
