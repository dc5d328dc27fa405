"""The contextq Python SDK: `Client`, `AsyncClient`, typed results and errors."""

from contextq.sdk import models
from contextq.sdk.client import AsyncClient, Client
from contextq.sdk.errors import (
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
    "models",
]
