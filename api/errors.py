"""The one place errors map to HTTP status; every error is `{"detail": ...}`.

- the errors of `contextq.errors`, which routes raise like the engine and the service do
  (no `HTTPException` anywhere else: ruff's banned-api rule, TID251) → 4xx: a missing or
  unknown key → 401 with `WWW-Authenticate: Bearer`, an upload over MAX_UPLOAD_BYTES →
  413 with `Connection: close`, a quota → 429 (with Retry-After for the rate); a
  `ValidationFailed` with a field or problems → 422 with a list of `{loc, msg, type}`, as
  FastAPI's own request validation answers;
- what the framework raises itself (an unknown route 404, a wrong method 405) → its status;
- the database, the broker or the blob store (S3) unreachable, locked or timing out (the
  drivers' operational errors, whichever route or dependency raised them) → 503 with
  Retry-After: an
  infrastructure fault, never a 500 (docs/operations.md#running-the-service);
- anything else unexpected → 503, logged with its traceback.
"""

from __future__ import annotations

import logging

import redis.exceptions
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from contextq.errors import (
    BadRequest,
    Conflict,
    ContextqError,
    Forbidden,
    Gone,
    HostileInput,
    InputTooLarge,
    InvalidInput,
    NotFound,
    QuotaExceeded,
    Unauthenticated,
    UnsupportedFileType,
    UploadTooLarge,
    ValidationFailed,
)
from store.blobs import BlobStoreUnavailable
from store.db import UNAVAILABLE_ERRORS
from store.metrics import QUOTA_REFUSALS

log = logging.getLogger("contextq.api")

STATUS_FOR: list[tuple[type[ContextqError], int]] = [
    (BadRequest, 400),
    (Unauthenticated, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (Gone, 410),
    (ValidationFailed, 422),
    (InputTooLarge, 413),
    (UnsupportedFileType, 415),
    (HostileInput, 422),
    (InvalidInput, 422),
    (QuotaExceeded, 429),
    (ContextqError, 400),
]

# seconds a client is told to wait when the database or the broker is unavailable
RETRY_AFTER_S = 5
# the database: locked past DATABASE_LOCK_TIMEOUT_S, unreachable, or no pooled connection
DATABASE_UNAVAILABLE = UNAVAILABLE_ERRORS
BROKER_UNAVAILABLE: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)


def status_for(exc: ContextqError) -> int:
    for kind, status in STATUS_FOR:
        if isinstance(exc, kind):
            return status
    return 400


def detail_for(exc: ContextqError, req: Request) -> object:
    """The answer's `detail`: the message, or for invalid values the list FastAPI's own
    request validation gives (`loc`, `msg`, `type` each)."""
    if not isinstance(exc, ValidationFailed):
        return str(exc)
    if exc.problems:
        return [{"loc": list(p.loc), "msg": p.msg, "type": p.type} for p in exc.problems]
    if exc.field:
        # a query parameter's own name locates it in the query, as FastAPI's own 422s do
        where = "query" if exc.field in req.query_params else "body"
        return [{"loc": [where, exc.field], "msg": str(exc), "type": "value_error"}]
    return str(exc)


def headers_for(exc: ContextqError) -> dict[str, str] | None:
    if isinstance(exc, Unauthenticated):
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, UploadTooLarge):
        return {"Connection": "close"}
    if isinstance(exc, QuotaExceeded) and exc.retry_after_s is not None:
        return {"Retry-After": str(exc.retry_after_s)}
    return None


def install(app: FastAPI) -> None:
    @app.exception_handler(ContextqError)
    async def _engine_error(req: Request, exc: ContextqError) -> JSONResponse:
        if isinstance(exc, QuotaExceeded):
            QUOTA_REFUSALS.labels(exc.limit).inc()
        return JSONResponse(
            {"detail": detail_for(exc, req)}, status_code=status_for(exc), headers=headers_for(exc)
        )

    async def _unavailable(req: Request, exc: Exception) -> JSONResponse:
        what = "database" if isinstance(exc, DATABASE_UNAVAILABLE) else "broker"
        if isinstance(exc, BlobStoreUnavailable):
            what = "blob store"
        log.warning("%s unavailable on %s %s: %s", what, req.method, req.url.path, str(exc)[:300])
        return JSONResponse(
            {"detail": f"the {what} is unavailable right now; retry in {RETRY_AFTER_S} s"},
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )

    for kind in (*DATABASE_UNAVAILABLE, *BROKER_UNAVAILABLE, BlobStoreUnavailable):
        app.add_exception_handler(kind, _unavailable)

    @app.exception_handler(RequestValidationError)
    async def _validation(_req: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(req: Request, exc: Exception) -> JSONResponse:
        # never a bare 5xx page for input; log it and answer a JSON error a person can act on
        log.exception("unhandled error on %s %s", req.method, req.url.path)
        return JSONResponse(
            {"detail": "the service could not complete this request; it has been logged"},
            status_code=503,
        )
