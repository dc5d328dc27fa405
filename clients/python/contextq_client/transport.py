"""HTTP under the SDK: auth, retries on 429/503 honouring `Retry-After`, error mapping.

`SyncTransport` and `AsyncTransport` share everything but the sending and the sleeping
(and the reading of a streamed body: `AsyncTransport` reads a `Payload` off the event
loop). `Resource` is the base of every namespace (`client.files`, …) over either one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx

from contextq_client.errors import TransportError, error_for
from contextq_client.payload import AsyncPayload, Payload

RETRY_STATUSES = (429, 503)
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """At most `max_retries` retries of a 429/503, waiting `Retry-After` (capped at
    `max_wait_s`), else `backoff_s * 2**attempt`."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_wait_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        wait = retry_after if retry_after is not None else self.backoff_s * 2**attempt
        return max(0.0, min(wait, self.max_wait_s))


def retry_after_s(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (the delay-seconds form; an HTTP date is not used by us)."""
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


def raise_for_status(response: httpx.Response) -> None:
    """An `APIError` subclass carrying the status and `detail` for any non-2xx answer."""
    if response.is_success:
        return
    try:
        body = response.json()
        detail = body.get("detail", body) if isinstance(body, dict) else body
    except ValueError:
        detail = response.text[:500] or response.reason_phrase
    raise error_for(response.status_code, detail, retry_after_s(response))


def build_headers(api_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    headers = {"User-Agent": "contextq-python"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    headers.update(extra or {})
    return headers


class SyncTransport:
    """Sends requests with `httpx.Client`; retries 429/503."""

    def __init__(self, http: httpx.Client, retry: RetryPolicy) -> None:
        self.http = http
        self.retry = retry

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = self.http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                raise TransportError(f"cannot reach {self.http.base_url}: {exc}") from exc
            if response.status_code in RETRY_STATUSES and attempt < self.retry.max_retries:
                time.sleep(self.retry.delay(attempt, retry_after_s(response)))
                attempt += 1
                continue
            raise_for_status(response)
            return response

    def request_json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    @contextlib.contextmanager
    def stream(self, method: str, path: str, **kwargs: Any) -> Iterator[httpx.Response]:
        """A streamed answer (not retried); an error answer raises as `request` does."""
        try:
            with self.http.stream(method, path, **kwargs) as response:
                if not response.is_success:
                    response.read()
                    raise_for_status(response)
                yield response
        except httpx.TransportError as exc:
            raise TransportError(f"cannot reach {self.http.base_url}: {exc}") from exc

    def close(self) -> None:
        self.http.close()


class AsyncTransport:
    """Sends requests with `httpx.AsyncClient`; retries 429/503."""

    def __init__(self, http: httpx.AsyncClient, retry: RetryPolicy) -> None:
        self.http = http
        self.retry = retry

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """As `SyncTransport.request`; a `Payload` body is read in a worker thread."""
        if isinstance(kwargs.get("content"), Payload):
            kwargs["content"] = AsyncPayload(kwargs["content"])
        attempt = 0
        while True:
            try:
                response = await self.http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                raise TransportError(f"cannot reach {self.http.base_url}: {exc}") from exc
            if response.status_code in RETRY_STATUSES and attempt < self.retry.max_retries:
                await asyncio.sleep(self.retry.delay(attempt, retry_after_s(response)))
                attempt += 1
                continue
            raise_for_status(response)
            return response

    async def request_json(self, method: str, path: str, **kwargs: Any) -> Any:
        return (await self.request(method, path, **kwargs)).json()

    @contextlib.asynccontextmanager
    async def stream(self, method: str, path: str, **kwargs: Any) -> AsyncIterator[httpx.Response]:
        """As `SyncTransport.stream`."""
        try:
            async with self.http.stream(method, path, **kwargs) as response:
                if not response.is_success:
                    await response.aread()
                    raise_for_status(response)
                yield response
        except httpx.TransportError as exc:
            raise TransportError(f"cannot reach {self.http.base_url}: {exc}") from exc

    async def close(self) -> None:
        await self.http.aclose()


TransportT = TypeVar("TransportT", SyncTransport, AsyncTransport)


class Resource(Generic[TransportT]):
    """A namespace of the API's routes over one transport: `Files(SyncTransport)`, and
    its generated twin `AsyncFiles(AsyncTransport)`."""

    def __init__(self, transport: TransportT) -> None:
        self._t: TransportT = transport
