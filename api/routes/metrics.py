"""GET /metrics: Prometheus text (docs/operations.md#running-the-service).

Served to a request from loopback without credentials, unless it carries
`X-Forwarded-For` or `Forwarded` (it came through a proxy, so its real client is
elsewhere). Any other request needs `Authorization: Bearer <METRICS_TOKEN>`: 401
without it, 403 with a wrong one, and always 403 when no token is configured.
"""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from api.deps import SettingsDep
from contextq.errors import Forbidden, Unauthenticated
from contextq.settings import Settings
from service import ops
from store.metrics import CONTENT_TYPE

router = APIRouter(tags=["operations"])

PROXY_HEADERS = ("x-forwarded-for", "forwarded")


def is_loopback(request: Request) -> bool:
    """A direct connection from this machine (no proxy header)."""
    if any(h in request.headers for h in PROXY_HEADERS):
        return False
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_access(request: Request, settings: Settings) -> None:
    if is_loopback(request):
        return
    token = settings.METRICS_TOKEN
    if not token:
        raise Forbidden("metrics are served to loopback only: set METRICS_TOKEN to allow others")
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise Unauthenticated("send `Authorization: Bearer <METRICS_TOKEN>`")
    if not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Forbidden("wrong metrics token")


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE: {}}, "description": "Prometheus text format"},
        401: {"description": "not loopback and no bearer token"},
        403: {"description": "wrong token, or no METRICS_TOKEN configured"},
    },
)
async def get_metrics(request: Request, settings: SettingsDep) -> Response:
    check_access(request, settings)
    body = await run_in_threadpool(ops.scrape_metrics, settings=settings)
    return Response(body, media_type=CONTENT_TYPE)
