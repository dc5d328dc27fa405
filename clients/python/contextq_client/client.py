"""`Client` and `AsyncClient`: the contextq API from Python.

from contextq_client import Client
with Client("http://127.0.0.1:8000", api_key="cq_…") as client:
    file = client.files.upload("report.pdf", wait=True)
    conv = client.conversations.create(model="gpt-4o")
    client.messages.create(conv.id, role="user", content="Summarise it", file_ids=[file.id])
    kwargs = client.chat_kwargs(conv.id, model="gpt-4o", format="openai")
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from contextq_client import async_resources as ar
from contextq_client import resources as r
from contextq_client.chat_kwargs import ChatFormat, chat_kwargs_from
from contextq_client.errors import TransportError
from contextq_client.events import AsyncEvents, Events
from contextq_client.models import Health
from contextq_client.routing import route
from contextq_client.transport import (
    DEFAULT_TIMEOUT_S,
    AsyncTransport,
    RetryPolicy,
    SyncTransport,
    build_headers,
)

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)


def _base_url(base_url: str | None) -> str:
    return (base_url or os.environ.get("CONTEXTQ_API_URL") or DEFAULT_BASE_URL).rstrip("/")


def _key(api_key: str | None) -> str | None:
    return api_key or os.environ.get("CONTEXTQ_API_KEY")


def _configured(
    http: HttpT, base_url: str | None, api_key: str | None, headers: Mapping[str, str] | None
) -> HttpT:
    """The httpx client pointed at the API with the key and extra headers."""
    http.base_url = _base_url(base_url)
    http.headers.update(build_headers(_key(api_key), headers))
    return http


class Client:
    """Synchronous client. `base_url` defaults to CONTEXTQ_API_URL, `api_key` to
    CONTEXTQ_API_KEY. Retries 429/503 up to `max_retries` times, waiting what Retry-After
    says (at most `max_retry_wait` seconds a time).
    Pass `http_client` to bring your own `httpx.Client` (its base URL and headers are set)."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        http = _configured(http_client or httpx.Client(timeout=timeout), base_url, api_key, headers)
        self._t = SyncTransport(
            http, RetryPolicy(max_retries=max_retries, max_wait_s=max_retry_wait)
        )
        self.files = r.Files(self._t)
        self.conversations = r.Conversations(self._t)
        self.messages = r.Messages(self._t)
        self.context = r.ContextResource(self._t)
        self.jobs = r.Jobs(self._t)
        self.settings = r.OwnerSettingsResource(self._t)
        self.memory = r.Memory(self._t)
        self.projects = r.Projects(self._t)
        self.workspace = r.Workspace(self._t)
        self.webhooks = r.Webhooks(self._t)
        self.tools = r.Tools(self._t)
        self.events = Events(self._t)

    @property
    def base_url(self) -> str:
        return str(self._t.http.base_url)

    @route("GET", "/healthz")
    def health(self) -> Health:
        """The stack's health (no key needed); answered even when it is 503."""
        try:
            response = self._t.http.get("/healthz")
        except httpx.TransportError as exc:
            raise TransportError(f"cannot reach {self.base_url}: {exc}") from exc
        return Health.model_validate(response.json())

    def chat_kwargs(
        self,
        conversation_id: str,
        *,
        model: str | None = None,
        format: ChatFormat = "openai",
        max_tokens: int | None = None,
        **context_params: Any,
    ) -> dict[str, Any]:
        """What the vendor SDK's call takes, from the ready-to-send context in `format`:
        `openai.chat.completions.create(**kw)` (`model`, `messages`, `tools` when any),
        `anthropic.messages.create(**kw)` (`model`, `system`, `messages`, `tools`,
        `max_tokens` = the room kept for the answer), `openai.responses.create(**kw)`
        (`model`, `instructions`, `input`, `tools`) or google-genai's
        `client.models.generate_content(**kw)` (`model`, `contents`, `config` with
        `system_instruction` and `tools`). `context_params` are `client.context.get`'s
        (strategy, options, tools, …)."""
        context = self.context.get(conversation_id, model=model, format=format, **context_params)
        return chat_kwargs_from(context, format=format, max_tokens=max_tokens)

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClient:
    """Asynchronous client: the same namespaces and methods as `Client`, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        http = _configured(
            http_client or httpx.AsyncClient(timeout=timeout), base_url, api_key, headers
        )
        self._t = AsyncTransport(
            http, RetryPolicy(max_retries=max_retries, max_wait_s=max_retry_wait)
        )
        self.files = ar.AsyncFiles(self._t)
        self.conversations = ar.AsyncConversations(self._t)
        self.messages = ar.AsyncMessages(self._t)
        self.context = ar.AsyncContextResource(self._t)
        self.jobs = ar.AsyncJobs(self._t)
        self.settings = ar.AsyncOwnerSettingsResource(self._t)
        self.memory = ar.AsyncMemory(self._t)
        self.projects = ar.AsyncProjects(self._t)
        self.workspace = ar.AsyncWorkspace(self._t)
        self.webhooks = ar.AsyncWebhooks(self._t)
        self.tools = ar.AsyncTools(self._t)
        self.events = AsyncEvents(self._t)

    @property
    def base_url(self) -> str:
        return str(self._t.http.base_url)

    @route("GET", "/healthz")
    async def health(self) -> Health:
        """As `Client.health`."""
        try:
            response = await self._t.http.get("/healthz")
        except httpx.TransportError as exc:
            raise TransportError(f"cannot reach {self.base_url}: {exc}") from exc
        return Health.model_validate(response.json())

    async def chat_kwargs(
        self,
        conversation_id: str,
        *,
        model: str | None = None,
        format: ChatFormat = "openai",
        max_tokens: int | None = None,
        **context_params: Any,
    ) -> dict[str, Any]:
        """As `Client.chat_kwargs`."""
        context = await self.context.get(
            conversation_id, model=model, format=format, **context_params
        )
        return chat_kwargs_from(context, format=format, max_tokens=max_tokens)

    async def close(self) -> None:
        await self._t.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


SYNC_RESOURCES: tuple[type, ...] = (
    Client,
    r.Files,
    r.Conversations,
    r.Messages,
    r.ContextResource,
    r.Jobs,
    r.OwnerSettingsResource,
    r.Memory,
    r.Projects,
    r.Workspace,
    r.Webhooks,
    r.Tools,
    Events,
)
ASYNC_RESOURCES: tuple[type, ...] = (
    AsyncClient,
    ar.AsyncFiles,
    ar.AsyncConversations,
    ar.AsyncMessages,
    ar.AsyncContextResource,
    ar.AsyncJobs,
    ar.AsyncOwnerSettingsResource,
    ar.AsyncMemory,
    ar.AsyncProjects,
    ar.AsyncWorkspace,
    ar.AsyncWebhooks,
    ar.AsyncTools,
    AsyncEvents,
)
