"""contextq engine: file processing, token counting, history strategies.

The engine imports no FastAPI, Celery or SQL; `api/`, `worker/`, `tasks/`
and `store/` are thin layers over it.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextq_client import AsyncClient, Client

__all__ = ["AsyncClient", "Client", "__version__"]


def __getattr__(name: str) -> Any:
    """`from contextq import Client, AsyncClient`: the thin client's classes (the
    `contextq-client` distribution), loaded only when asked for, so a process that only
    uses the engine never imports httpx."""
    if name in ("Client", "AsyncClient"):
        import contextq_client  # noqa: PLC0415 - httpx, only when the client is asked for

        return getattr(contextq_client, name)
    raise AttributeError(f"module 'contextq' has no attribute {name!r}")
