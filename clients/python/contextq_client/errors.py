"""The SDK's exceptions: every one carries the HTTP status and the API's `detail`."""

from __future__ import annotations

from typing import Any


class ContextqError(Exception):
    """Base of every SDK error."""


class TransportError(ContextqError):
    """The API could not be reached (connection refused, timeout, broken stream)."""


class APIError(ContextqError):
    """The API answered with an error status; `detail` is its `{"detail": …}`."""

    def __init__(self, status_code: int, detail: Any, *, retry_after: float | None = None) -> None:
        self.status_code = status_code
        self.detail = detail
        self.retry_after = retry_after
        super().__init__(f"HTTP {status_code}: {detail_text(detail)}")


class AuthenticationError(APIError):
    """401: no key, a wrong key, or a revoked one."""


class PermissionDeniedError(APIError):
    """403."""


class NotFoundError(APIError):
    """404: missing, or another owner's (the API does not tell them apart)."""


class ConflictError(APIError):
    """409: the resource is not in a state that allows this (e.g. not processed yet)."""


class GoneError(APIError):
    """410."""


class PayloadTooLargeError(APIError):
    """413: over a size limit (MAX_UPLOAD_BYTES, a workspace file)."""


class ValidationError(APIError):
    """400 or 422: the request was refused; `detail` says which field and why."""


class RateLimitError(APIError):
    """429: over a quota or the request rate (after the SDK's own retries)."""


class ServiceUnavailableError(APIError):
    """503: the database or a part is busy or down (after the SDK's own retries)."""


class ServerError(APIError):
    """Any other 5xx."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    413: PayloadTooLargeError,
    422: ValidationError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_for(status_code: int, detail: Any, retry_after: float | None = None) -> APIError:
    """The exception for an error answer."""
    cls = _BY_STATUS.get(status_code) or (ServerError if status_code >= 500 else APIError)
    return cls(status_code, detail, retry_after=retry_after)


def detail_text(detail: Any) -> str:
    """A one-line rendering of `detail` (a string, or FastAPI's list of field errors)."""
    if isinstance(detail, list):
        parts = []
        for item in detail[:5]:
            if isinstance(item, dict):
                loc = ".".join(str(x) for x in item.get("loc", []) if x != "body")
                parts.append(f"{loc}: {item.get('msg', '')}" if loc else str(item.get("msg")))
            else:
                parts.append(str(item))
        return "; ".join(parts)
    return str(detail)
