"""The FastAPI app: `uvicorn api.main:app` or `contextq api`."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp

from api import errors
from api.middleware import RequestContextMiddleware, RouteTemplates
from api.routes import context, conversations, files, health, jobs, memory, messages
from api.routes import settings as owner_settings
from contextq import __version__
from contextq.logs import configure_logging
from contextq.settings import get_settings
from contextq.startup import log_context_management

log = logging.getLogger("contextq.api")


def warm_up() -> None:
    """Build what the first context request would otherwise pay for (~0.3 s): the model
    catalogue index and the default tokenizer. Then move these long-lived objects out of
    the garbage collector's way so full collections stay short."""
    from contextq import catalog, tokens

    catalog.resolve_model("gpt-4o", get_settings())
    tokens.get_encoding()
    gc.collect()
    gc.freeze()


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    settings = get_settings()
    # a no-op when the server configured it already (api.asgi) or a test runner owns logging
    configure_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT, force=False)
    log_context_management(settings)
    try:
        await run_in_threadpool(warm_up)
    except Exception:  # a cold cache is slower, never broken
        log.warning("warm-up failed; the first requests will be slower", exc_info=True)
    yield


class ContextqAPI(FastAPI):
    """FastAPI with the request-id middleware outermost: around the error handlers too,
    so a 503 from an unexpected error carries its X-Request-ID and its log line the id."""

    def build_middleware_stack(self) -> ASGIApp:
        templates = RouteTemplates(lambda: self.routes)
        return RequestContextMiddleware(super().build_middleware_stack(), templates)


def create_app() -> FastAPI:
    app = ContextqAPI(
        title="contextq",
        version=__version__,
        summary="Context for LLM agents, prepared in the background.",
        docs_url="/docs",
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(health.router)
    for module in (files, conversations, messages, memory, context, jobs, owner_settings):
        app.include_router(module.router, prefix="/v1")
    return app


app = create_app()
