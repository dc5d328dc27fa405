"""Request ids and the access line: a pure ASGI middleware, outermost in the app.

- takes the request's `X-Request-ID` (a token of 1-128 characters from
  `[A-Za-z0-9._:-]`), or makes one (32 hex characters), and returns it on every
  response, error answers included;
- sets `contextq.logs.REQUEST_ID` while the request is served, so every line logged
  meanwhile (threadpool work included) carries it;
- writes one access line per request on `contextq.api.access`: method, route template
  (`/v1/files/{file_id}`, never the raw path: ids and user input stay out of the
  pattern), status, duration, request id;
- counts the request in `contextq_http_request_duration_seconds` (same labels).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contextq.logs import REQUEST_ID
from store.metrics import observe_request

HEADER = "X-Request-ID"
_HEADER_KEY = HEADER.lower().encode("latin-1")
_VALID_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
UNMATCHED = "<unmatched>"

access_log = logging.getLogger("contextq.api.access")


def request_id_from(scope: Scope) -> str:
    """The client's id when it is a sane token, else a new one."""
    for key, value in scope.get("headers", ()):
        if key == _HEADER_KEY:
            candidate = bytes(value).decode("latin-1").strip()
            if _VALID_ID.fullmatch(candidate):
                return candidate
            break
    return uuid.uuid4().hex


class RouteTemplates:
    """The template of the route a request matched, router prefix included.

    FastAPI puts the matched route in `scope["route"]`; since FastAPI shares an included
    router's routes instead of copying them, that route's own path lacks the prefix
    (`/files/{file_id}`), so the full templates come from `fastapi.routing.
    iter_route_contexts` over the app's routes, computed once at the first request.
    """

    def __init__(self, routes: Callable[[], Iterable[Any]]) -> None:
        self._routes = routes
        self._by_route: dict[int, str] | None = None

    def _build(self) -> dict[int, str]:
        try:
            from fastapi.routing import iter_route_contexts  # noqa: PLC0415 - older FastAPIs lack it
        except ImportError:  # an older FastAPI copies included routes: their path is full
            return {}
        return {
            id(ctx.original_route): ctx.path_format
            for ctx in iter_route_contexts(list(self._routes()))
            if ctx.path_format
        }

    def __call__(self, scope: Scope) -> str:
        route: Any = scope.get("route")
        if route is None:
            return UNMATCHED
        if self._by_route is None:
            self._by_route = self._build()
        template = self._by_route.get(id(route)) or getattr(route, "path_format", None)
        return str(template) if template else UNMATCHED


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, route_template: Callable[[Scope], str]) -> None:
        self.app = app
        self.route_template = route_template

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope)
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        status = 500  # unless a response starts

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                MutableHeaders(scope=message)[HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            duration_ms = seconds * 1000
            method, route = scope.get("method", "-"), self.route_template(scope)
            observe_request(method, route, status, seconds)
            access_log.info(
                "%s %s %d %.1fms",
                method,
                route,
                status,
                duration_ms,
                extra={
                    "method": method,
                    "route": route,
                    "status": status,
                    "duration_ms": round(duration_ms, 2),
                },
            )
            REQUEST_ID.reset(token)
