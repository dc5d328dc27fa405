"""`@route(METHOD, PATH)` marks the SDK method that calls a route of the API; the
coverage test walks the API's OpenAPI paths and fails on any route no method names."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar
from urllib.parse import quote

F = TypeVar("F", bound=Callable[..., Any])
ROUTE_ATTR = "__contextq_routes__"

JsonObject = dict[str, Any]


def route(method: str, path: str) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        routes = [*getattr(fn, ROUTE_ATTR, ()), (method.upper(), path)]
        setattr(fn, ROUTE_ATTR, routes)
        return fn

    return mark


def routes_of(objects: Iterable[type]) -> set[tuple[str, str]]:
    """Every (METHOD, PATH) marked on the methods of these classes."""
    found: set[tuple[str, str]] = set()
    for cls in objects:
        for name in dir(cls):
            found.update(getattr(getattr(cls, name), ROUTE_ATTR, ()))
    return found


def seg(value: str) -> str:
    """One path segment (an id), quoted."""
    return quote(str(value), safe="")


def params(**values: Any) -> dict[str, Any]:
    """Query parameters without the Nones; dicts as JSON, booleans as `true`/`false`."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, dict):
            out[key] = json.dumps(value, separators=(",", ":"))
        else:
            out[key] = value
    return out


def body(**values: Any) -> dict[str, Any]:
    """A JSON body without the fields left as None."""
    return {k: v for k, v in values.items() if v is not None}
