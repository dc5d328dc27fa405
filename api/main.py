"""The FastAPI app: `uvicorn api.main:app` or `contextq api`."""

from __future__ import annotations

from fastapi import FastAPI

from api import errors
from api.routes import context, conversations, files, health, jobs
from contextq import __version__


def create_app() -> FastAPI:
    app = FastAPI(
        title="contextq",
        version=__version__,
        summary="Context for LLM agents, prepared in the background.",
        docs_url="/docs",
    )
    errors.install(app)
    app.include_router(health.router)
    for module in (files, conversations, context, jobs):
        app.include_router(module.router, prefix="/v1")
    return app


app = create_app()
