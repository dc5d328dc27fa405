"""Message type and token counting of the JSON the API receives."""

from __future__ import annotations

import json

from contextq.history import Message, count_message_tokens
from contextq.history.message_tokens import token_count
from contextq.tokens import count_tokens


def test_to_openai_has_only_api_keys_and_no_none() -> None:
    m = Message(
        role="user",
        content="hi",
        id="x",
        seq=3,
        pinned=True,
        kind="user_prompt",
        importance=0.6,
        token_count=5,
        file_ids=["f1"],
    )
    assert m.to_openai() == {"role": "user", "content": "hi"}
    call = Message(
        role="assistant",
        tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
        ],
    )
    out = call.to_openai()
    assert out == {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
        ],
    }
    tool = Message(role="tool", tool_call_id="c1", content=None, name="f")
    assert tool.to_openai() == {"role": "tool", "content": "", "tool_call_id": "c1"}


def test_from_openai_round_trip() -> None:
    data = {"role": "assistant", "content": "done", "name": "bot"}
    assert Message.from_openai(data, seq=4).to_openai() == data


def test_count_is_the_json_as_sent_nothing_added() -> None:
    data = {"role": "user", "content": "Grüße, “world” — ünïcode"}
    serialised = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    assert "\\u" not in serialised
    # no framing, no priming (docs/token-counting.md)
    expected = count_tokens(serialised, "o200k_base")
    assert count_message_tokens(data, "gpt-4o") == expected
    assert count_message_tokens(Message(role="user", content=data["content"]), "gpt-4o") == expected
    # cl100k for models without a known OpenAI encoding
    assert count_message_tokens(data, "claude-sonnet-4-5") == (
        count_tokens(serialised, "cl100k_base")
    )


def test_stored_count_is_never_recounted() -> None:
    m = Message(role="user", content="a long text " * 100, token_count=7)
    assert token_count(m) == 7
    fresh = Message(role="user", content="hello")
    assert token_count(fresh) == fresh.token_count == count_message_tokens(fresh)
