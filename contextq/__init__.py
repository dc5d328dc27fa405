"""contextq engine: file processing, token counting, history strategies.

The engine imports no FastAPI, Celery or SQL; `api/`, `worker/`, `tasks/`
and `store/` are thin layers over it.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextq.sdk import AsyncClient, Client

__all__ = ["AsyncClient", "Client", "__version__"]


def __getattr__(name: str) -> Any:
    """`from contextq import Client, AsyncClient` without loading httpx into every
    process that only uses the engine."""
    if name in ("Client", "AsyncClient"):
        from contextq import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'contextq' has no attribute {name!r}")
