"""The error body every route answers with (docs/api.md#authentication-errors-and-health):
`{"detail": ...}`, a message a person can act on, or, for a request that does not validate, one item
per field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class FieldError(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ErrorBody(BaseModel):
    detail: str | list[FieldError]


def error_responses() -> dict[int | str, dict[str, Any]]:
    """The error answers of every /v1 route, as the OpenAPI document declares them."""
    return {
        401: {"model": ErrorBody, "description": "missing or invalid API key"},
        404: {"model": ErrorBody, "description": "not found (or another owner's)"},
        422: {
            "model": ErrorBody,
            "description": "the request does not validate; `detail` says why",
        },
    }
