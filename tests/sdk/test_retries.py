"""The SDK's retry loop: 429/503 retried after Retry-After (capped), else a backoff;
other errors never retried; the error raised carries status, detail and Retry-After.
The server is scripted (httpx.MockTransport) to give exact headers and timings; the real
API's refusals are in test_sdk_in_process.py."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from contextq_client import Client, ServiceUnavailableError, ValidationError
from contextq_client.transport import RetryPolicy

SETTINGS = {"system_prompt": None, "default_system_prompt": "d", "updated_at": None}


def _client(answers: list[httpx.Response], seen: list[float], **kw: float) -> Client:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(time.monotonic())
        return answers.pop(0)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    return Client("http://api", api_key="k", http_client=http, **kw)  # type: ignore[arg-type]


def test_retry_after_is_honoured() -> None:
    seen: list[float] = []
    answers = [
        httpx.Response(429, json={"detail": "slow down"}, headers={"Retry-After": "0.3"}),
        httpx.Response(200, json=SETTINGS),
    ]
    with _client(answers, seen) as client:
        assert client.settings.get().default_system_prompt == "d"
    assert len(seen) == 2 and seen[1] - seen[0] >= 0.3


def test_503_without_retry_after_backs_off_then_raises() -> None:
    seen: list[float] = []
    answers = [httpx.Response(503, json={"detail": "database busy"}) for _ in range(3)]
    make: Callable[..., Client] = _client
    with make(answers, seen, max_retries=2) as client:
        client._t.retry = RetryPolicy(max_retries=2, backoff_s=0.1)
        with pytest.raises(ServiceUnavailableError) as err:
            client.settings.get()
    assert err.value.detail == "database busy" and err.value.status_code == 503
    assert len(seen) == 3
    assert seen[1] - seen[0] >= 0.1 and seen[2] - seen[1] >= 0.2  # 0.1 s, then 0.2 s


def test_other_errors_are_not_retried() -> None:
    seen: list[float] = []
    answers = [httpx.Response(422, json={"detail": "bad"}), httpx.Response(200, json=SETTINGS)]
    with _client(answers, seen) as client, pytest.raises(ValidationError):
        client.settings.get()
    assert len(seen) == 1


def test_the_wait_is_capped() -> None:
    assert RetryPolicy(max_wait_s=2.0).delay(0, retry_after=3600) == 2.0
    assert RetryPolicy().delay(2, retry_after=None) == 2.0
