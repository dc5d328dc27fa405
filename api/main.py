"""The FastAPI app: `uvicorn api.main:app` or `contextq api`."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from api import errors
from api.routes import context, conversations, files, health, jobs, memory, messages
from contextq import __version__

log = logging.getLogger("contextq.api")


def warm_up() -> None:
    """Build what the first context request would otherwise pay for (~0.3 s): the model
    catalogue index and the default tokenizer. Then move these long-lived objects out of
    the garbage collector's way so full collections stay short."""
    from contextq import catalog, tokens
    from contextq.settings import get_settings

    catalog.resolve_model("gpt-4o", get_settings())
    tokens.get_encoding()
    gc.collect()
    gc.freeze()


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    try:
        await run_in_threadpool(warm_up)
    except Exception:  # a cold cache is slower, never broken
        log.warning("warm-up failed; the first requests will be slower", exc_info=True)
    yield


def create_app() -> FastAPI:
    app = FastAPI(
        title="contextq",
        version=__version__,
        summary="Context for LLM agents, prepared in the background.",
        docs_url="/docs",
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(health.router)
    for module in (files, conversations, messages, memory, context, jobs):
        app.include_router(module.router, prefix="/v1")
    return app


app = create_app()
