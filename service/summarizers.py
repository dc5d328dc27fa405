"""The summarisers compaction writes with, chosen by `SUMMARIZER` (`get_summarizer`):
the engine's offline `ExtractiveSummarizer`, or `OpenAISummarizer`, any OpenAI-compatible
chat-completions endpoint, over httpx (here, since the engine does no I/O).

`OpenAISummarizer` sends the engine's request (`summary_messages`: the prompt asks for
the sections of `summary_format`, carries the memory's sections to copy, and asks that
every line of the structured sections end with the seqs of the transcript messages it
came from) with timeouts and exponential backoff on 429 / 5xx / connection errors, and
reads the answer with the engine (`summary_from_answer`). It raises `SummarizerError`
on failure: a failed summary is never returned as a summary. `truncation` is no
summariser: compaction's fallback alone (`contextq.history.truncate_history`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Any

import httpx

from contextq.errors import SummarizerError
from contextq.history.extractive import ExtractiveSummarizer
from contextq.history.summarizers import Summarizer, summary_from_answer, summary_messages
from contextq.history.summary_format import MemoryFacts
from contextq.history.types import Message
from contextq.settings import Settings
from contextq.tokens import DEFAULT_ENCODING

log = logging.getLogger("contextq.history.summarizers")

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAISummarizer:
    """Summaries from any OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.transport = transport

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> OpenAISummarizer:
        options: dict[str, Any] = {
            "base_url": settings.OPENAI_BASE_URL,
            "model": settings.SUMMARIZER_MODEL,
            "api_key": settings.OPENAI_API_KEY,
            "timeout_s": settings.SUMMARIZER_TIMEOUT_S,
            "max_retries": settings.SUMMARIZER_MAX_RETRIES,
        }
        options.update(overrides)
        return cls(**options)

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        encoding: str = DEFAULT_ENCODING,
        facts: MemoryFacts | None = None,
    ) -> str:
        body = {
            "model": self.model,
            "messages": summary_messages(messages, max_tokens=max_tokens, facts=facts),
            "max_tokens": max_tokens,
            "temperature": 0,
        }
        data = self._post("/chat/completions", body)
        return summary_from_answer(data, max_tokens=max_tokens, encoding=encoding)

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = "no attempt made"
        last_retry_after: float | None = None
        with httpx.Client(timeout=self.timeout, transport=self.transport) as client:
            for attempt in range(self.max_retries + 1):
                if attempt:
                    time.sleep(self._delay(attempt, last_retry_after))
                last_retry_after = None
                try:
                    response = client.post(self.base_url + path, json=body, headers=headers)
                except httpx.TransportError as exc:  # connect, read timeout, protocol
                    last = f"{type(exc).__name__}: {exc}"
                    log.warning("summariser request failed (attempt %d): %s", attempt + 1, last)
                    continue
                if response.status_code in _RETRY_STATUS:
                    last = f"HTTP {response.status_code}: {response.text[:200]}"
                    last_retry_after = _retry_after(response)
                    log.warning("summariser answered %s (attempt %d)", last, attempt + 1)
                    continue
                if response.status_code >= 400:
                    raise SummarizerError(
                        f"summariser refused the request: HTTP {response.status_code}: "
                        f"{response.text[:200]}"
                    )
                try:
                    payload = response.json()
                except json.JSONDecodeError as exc:
                    raise SummarizerError(f"summariser answer is not JSON: {exc}") from exc
                if not isinstance(payload, dict):
                    raise SummarizerError("summariser answer is not a JSON object")
                return payload
        raise SummarizerError(f"summariser failed after {self.max_retries + 1} attempts: {last}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        delay = self.backoff_s * (2 ** (attempt - 1))
        if retry_after is not None:
            delay = max(delay, retry_after)
        return float(min(delay, self.max_backoff_s))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def get_summarizer(settings: Settings, name: str | None = None) -> Summarizer | None:
    """The configured summariser (`SUMMARIZER`); None for `truncation` (fallback only)."""
    choice = name or settings.SUMMARIZER
    if choice == "extractive":
        return ExtractiveSummarizer()
    if choice == "openai":
        return OpenAISummarizer.from_settings(settings)
    if choice == "truncation":
        return None
    raise SummarizerError(f"unknown summariser {choice!r}")
