"""`@route(METHOD, PATH)` marks the SDK method that calls a route of the API; the
coverage test walks the API's OpenAPI paths and fails on any route no method names."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Generator, Iterable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

F = TypeVar("F", bound=Callable[..., Any])
CHUNK_BYTES = 1 << 20
TRANSFER_TIMEOUT_S = 600.0  # a large file streamed up or down
ROUTE_ATTR = "__contextq_routes__"


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


class FileChunks:
    """A local file's bytes for a request body, read again from the start each time it
    is iterated (a retried PUT sends it whole again); sync and async clients alike."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Generator[bytes, None, None]:
        with self.path.open("rb") as fh:
            while chunk := fh.read(CHUNK_BYTES):
                yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self:
            yield chunk


def put_body(content: bytes | Path) -> dict[str, Any]:
    """`content=` of a raw-bytes PUT; a local file is streamed, with its Content-Length
    and the transfer timeout."""
    if isinstance(content, bytes):
        return {"content": content}
    size = content.stat().st_size  # OSError for a missing file, before any request
    return {
        "content": FileChunks(content),
        "headers": {"Content-Length": str(size)},
        "timeout": TRANSFER_TIMEOUT_S,
    }
