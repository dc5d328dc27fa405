"""GET /healthz (no auth): 200 when the database and the broker answer, else 503."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from contextq.settings import get_settings
from store.db import get_engine
from store.redis_clients import redis_client

log = logging.getLogger("contextq.api.health")

router = APIRouter(tags=["health"])


def _database() -> str:
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:
        log.warning("healthz: database: %s", exc)
        return "unavailable"


def _broker() -> str:
    url = get_settings().REDIS_URL
    if not url:
        return "not configured"
    try:
        redis_client(url, timeout_s=1.0).ping()
        return "ok"
    except Exception as exc:
        log.warning("healthz: broker: %s", exc)
        return "unavailable"


@router.get("/healthz", responses={503: {"description": "database or broker unavailable"}})
async def healthz() -> JSONResponse:
    database = await run_in_threadpool(_database)
    broker = await run_in_threadpool(_broker)
    status = 200 if database == broker == "ok" else 503
    return JSONResponse({"database": database, "broker": broker}, status_code=status)
