"""contextq-client, the thin Python client of contextq: `Client`, `AsyncClient`, typed
results and errors (`chat_kwargs` on the clients; `contextq_client.integrations` for
PydanticAI and LangGraph). Its only dependencies are httpx and pydantic."""

from contextq_client import models
from contextq_client.client import AsyncClient, Client
from contextq_client.errors import (
    APIError,
    AuthenticationError,
    ConflictError,
    ContextqError,
    GoneError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    TransportError,
    ValidationError,
)

__version__ = "0.1.0"

__all__ = [
    "APIError",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "ConflictError",
    "ContextqError",
    "GoneError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "ServiceUnavailableError",
    "TransportError",
    "ValidationError",
    "__version__",
    "models",
]
