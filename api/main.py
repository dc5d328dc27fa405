"""The FastAPI app: `uvicorn api.main:app` or `contextq api`."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp

from api import errors, mcp
from api.middleware import RequestContextMiddleware, RouteTemplates
from api.routes import (
    context,
    conversations,
    events,
    files,
    health,
    jobs,
    memory,
    messages,
    metrics,
    projects,
    tools,
    webhooks,
    workspaces,
)
from api.routes import settings as owner_settings
from api.schemas.errors import error_responses
from api.ui import router as inspector_router
from contextq import __version__, catalog, tokens
from contextq.logs import configure_logging
from contextq.settings import get_settings
from contextq.startup import log_context_management
from service import event_buffer, ops
from store import metrics as store_metrics
from store import search
from store.blobs import BlobStoreUnavailable, check_blob_store
from store.db import set_lock_timeout

log = logging.getLogger("contextq.api")


def warm_up() -> None:
    """Build what the first context request would otherwise pay for (~0.6 s): the model
    catalogue index, the default tokenizer and project search's embedding model. Then
    move these long-lived objects out of the garbage collector's way so full collections
    stay short."""
    catalog.resolve_model("gpt-4o", get_settings())
    tokens.get_encoding()
    search.warm()  # the embedding model for project search (≈ 0.3 s)
    gc.collect()
    gc.freeze()


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    settings = get_settings()
    # a no-op when the server configured it already (api.asgi) or a test runner owns logging
    configure_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT, force=False)
    log_context_management(settings)
    try:  # a misconfigured blob store stops the API here, not at the first upload
        await run_in_threadpool(check_blob_store, settings)
    except BlobStoreUnavailable as exc:
        log.critical("cannot start: %s", exc)
        raise
    try:
        await run_in_threadpool(warm_up)
    except Exception:  # a cold cache is slower, never broken
        log.warning("warm-up failed; the first requests will be slower", exc_info=True)
    yield
    await run_in_threadpool(event_buffer.flush)  # context events still in memory


class ContextqAPI(FastAPI):
    """FastAPI with the request-id middleware outermost: around the error handlers too,
    so a 503 from an unexpected error carries its X-Request-ID and its log line the id."""

    def build_middleware_stack(self) -> ASGIApp:
        templates = RouteTemplates(lambda: self.routes)
        return RequestContextMiddleware(super().build_middleware_stack(), templates)


def create_app() -> FastAPI:
    settings = get_settings()
    # before any request is counted: every API process counts into DATA_DIR/metrics
    store_metrics.setup_multiprocess(settings)
    ops.count_from_zero()  # every metrics family from the first scrape (known labels at 0)
    set_lock_timeout(settings.DATABASE_LOCK_TIMEOUT_S)  # a locked database: 503, not a hang
    app = ContextqAPI(
        title="contextq",
        version=__version__,
        summary="Context for LLM agents, prepared in the background.",
        docs_url="/docs",
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(inspector_router)  # /ui, the inspector (docs/inspector.md)
    routers = (files, conversations, messages, memory, context, jobs, workspaces, projects, tools)
    for module in (*routers, events, webhooks, owner_settings):
        app.include_router(module.router, prefix="/v1", responses=error_responses())
    # the MCP server (docs/mcp.md): streamable HTTP, the same key, the conversation in a header
    # an ASGI app as the endpoint: Starlette calls a class instance with (scope, receive, send)
    app.add_route(mcp.PATH, mcp.McpEndpoint(), methods=["GET", "POST", "DELETE"])  # type: ignore[arg-type]
    return app


app = create_app()
