"""Summarisers: extractive (offline), openai (against a local chat-completions server),
and the truncation fallback."""

from __future__ import annotations

import re
from typing import Any

import pytest

from contextq.errors import SummarizerError
from contextq.history import ExtractiveSummarizer, Message, truncate_history
from contextq.history.summarizers import format_count
from contextq.settings import Settings
from contextq.tokens import count_tokens
from service.summarizers import OpenAISummarizer, get_summarizer
from tests.engine.history.builders import agent_history, assistant, counted, result, user
from tests.engine.history.fake_llm import FakeChatServer


@pytest.fixture
def history() -> list[Message]:
    return agent_history(20, seed=11)


def summarizer(url: str, **kw: Any) -> OpenAISummarizer:
    options: dict[str, Any] = {
        "base_url": url,
        "model": "tiny",
        "api_key": "sk-test",
        "timeout_s": 5,
        "max_retries": 2,
        "backoff_s": 0.01,
    }
    options.update(kw)
    return OpenAISummarizer(**options)


def test_openai_summary(history: list[Message]) -> None:
    with FakeChatServer(["ok"]) as server:
        text = summarizer(server.url).summarize(history, max_tokens=300)
    assert text.startswith("SUMMARY of ")
    [body] = server.requests
    assert body["model"] == "tiny" and body["max_tokens"] == 300
    assert body["messages"][0]["role"] == "system"
    assert "[#1] user:" in body["messages"][1]["content"]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_openai_retries_500_then_succeeds(history: list[Message]) -> None:
    with FakeChatServer([500, 429, "ok"]) as server:
        text = summarizer(server.url).summarize(history, max_tokens=300)
    assert text.startswith("SUMMARY")
    assert len(server.requests) == 3


def test_openai_permanent_failure_raises(history: list[Message]) -> None:
    with FakeChatServer([503, 503, 503, 503]) as server, pytest.raises(SummarizerError) as err:
        summarizer(server.url).summarize(history, max_tokens=300)
    assert "after 3 attempts" in str(err.value) and "503" in str(err.value)
    assert len(server.requests) == 3


def test_openai_client_error_is_not_retried(history: list[Message]) -> None:
    with FakeChatServer([401]) as server, pytest.raises(SummarizerError) as err:
        summarizer(server.url).summarize(history, max_tokens=300)
    assert "401" in str(err.value) and len(server.requests) == 1


def test_openai_connection_refused_raises(history: list[Message]) -> None:
    with FakeChatServer([]) as server:
        url = server.url
    with pytest.raises(SummarizerError) as err:
        summarizer(url, max_retries=1).summarize(history, max_tokens=100)
    assert "ConnectError" in str(err.value)


def test_settings_pick_the_summariser() -> None:
    assert isinstance(get_summarizer(Settings()), ExtractiveSummarizer)
    s = get_summarizer(
        Settings(
            SUMMARIZER="openai",
            OPENAI_BASE_URL="http://x/v1",
            SUMMARIZER_MODEL="m",
            SUMMARIZER_MAX_RETRIES=5,
        )
    )
    assert isinstance(s, OpenAISummarizer) and s.max_retries == 5 and s.model == "m"
    assert get_summarizer(Settings(SUMMARIZER="truncation")) is None


def test_extractive_keeps_goals_decisions_errors_and_pins() -> None:
    filler = [assistant(i, f"Routine chatter number {i} about nothing much.") for i in range(3, 60)]
    msgs = counted(
        [
            user(1, "Our goal is to migrate the billing service to Postgres."),
            assistant(2, "We decided to keep the old schema for a week.", kind="decision"),
            *filler,
            result(60, "c9", "Error: connection refused on port 5432"),
            user(61, "Remember: the staging password rotates daily.", pinned=True),
            assistant(62, "Working on it."),
        ]
    )
    text = ExtractiveSummarizer().summarize(msgs, max_tokens=200)
    assert count_tokens(text) <= 200
    for needle in (
        "migrate the billing service",
        "keep the old schema",
        "connection refused",
        "staging password rotates",
    ):
        assert needle in text
    assert text == ExtractiveSummarizer().summarize(msgs, max_tokens=200)  # deterministic
    with pytest.raises(SummarizerError):
        ExtractiveSummarizer().summarize([Message(role="assistant", content="")], max_tokens=50)


def test_truncation_keeps_head_and_tail_and_says_what_was_cut() -> None:
    msgs = counted([user(i, f"message {i} " + "word " * 40) for i in range(1, 301)])
    cut = truncate_history(msgs, max_tokens=2_000)
    assert count_tokens(cut.text) <= 2_000
    assert cut.text.startswith("[#1] user: message 1 ")
    assert "message 300 " in cut.text
    note = r"\[\.\.\. ([\d ]+) messages \(#(\d+)-#(\d+)\), ([\d ]+) tokens omitted \.\.\.\]"
    match = re.search(note, cut.text)
    assert match, cut.text[:500]
    omitted = int(match[1].replace(" ", ""))
    assert omitted == cut.omitted_messages == 300 - cut.head_messages - cut.tail_messages
    first, last = int(match[2]), int(match[3])
    assert first == cut.head_messages + 1 and last == 300 - cut.tail_messages
    assert int(match[4].replace(" ", "")) == sum(m.token_count or 0 for m in msgs[first - 1 : last])
    # about 25% of the room for the head, 75% for the tail
    assert 2 * cut.head_messages < cut.tail_messages < 4 * cut.head_messages
    assert format_count(150_230) == "150 230"
