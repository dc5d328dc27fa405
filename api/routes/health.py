"""GET /healthz (no auth): the database, the broker and the workers, as the broker sees them.

200 when the database and the broker answer and a worker sent a heartbeat in the last
few seconds, or, with none live, while the newest heartbeat (or this process's start)
is within HEALTH_WORKER_GRACE_S; 503 otherwise (docs/api.md#authentication-errors-and-health,
docs/operations.md#running-the-service).
"""

from __future__ import annotations

import time

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from api.deps import SettingsDep
from api.errors import RETRY_AFTER_S
from service import ops

router = APIRouter(tags=["health"])

STARTED_AT = time.time()  # a fresh API process gives the workers the grace period too


@router.get(
    "/healthz",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "database": "ok",
                        "broker": "ok",
                        "workers": "ok",
                        "live_workers": 2,
                    }
                }
            }
        },
        503: {"description": "database or broker unavailable, or no live worker for too long"},
    },
)
async def healthz(settings: SettingsDep) -> JSONResponse:
    report = await run_in_threadpool(ops.health, settings=settings, started_at=STARTED_AT)
    if report.ok:
        return JSONResponse(report.as_dict())
    headers = {"Retry-After": str(RETRY_AFTER_S)}
    return JSONResponse(report.as_dict(), status_code=503, headers=headers)
