"""`chat_kwargs` through the OpenAI and Anthropic SDKs' own request building and
validation: each SDK gets an httpx transport that captures the request and sends nothing;
the captured body must be exactly the kwargs."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from contextq_client import Client
from tests.support.api import in_process_client

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the docs. Give a query.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]
OPENAI_ANSWER = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
}
ANTHROPIC_ANSWER = {
    "id": "m",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    # the TestClient as a context manager runs the app's lifespan (its clients closed after)
    with (
        in_process_client() as http,
        Client("http://testserver", api_key=owner.key, http_client=http) as c,
    ):
        yield c


def _conversation(sdk: Client, model: str) -> str:
    conv = sdk.conversations.create(model=model, tools=TOOLS)
    sdk.messages.append(
        conv.id,
        [
            {"role": "user", "content": "find the release date"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"query": "release"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "Friday"},
            {"role": "assistant", "content": "Friday."},
            {"role": "user", "content": "and the freeze?"},
        ],
    )
    return conv.id


def test_openai_sdk_accepts_the_kwargs(sdk: Client) -> None:
    conv_id = _conversation(sdk, "gpt-4o")
    kwargs = sdk.chat_kwargs(conv_id, model="gpt-4o", format="openai")
    assert set(kwargs) == {"model", "messages", "tools"}
    captured: list[dict[str, Any]] = []

    def capture(request: httpx.Request) -> httpx.Response:
        captured.append(json.loads(request.content))
        return httpx.Response(200, json=OPENAI_ANSWER)

    llm = openai.OpenAI(
        api_key="sk-x", http_client=httpx.Client(transport=httpx.MockTransport(capture))
    )
    llm.chat.completions.create(**kwargs)
    assert captured == [kwargs]
    assert kwargs["tools"] == TOOLS
    assert kwargs["messages"][0]["role"] == "system"
    assert kwargs["messages"][-1] == {"role": "user", "content": "and the freeze?"}


def _anthropic_capturing(captured: list[dict[str, Any]]) -> anthropic.Anthropic:
    for name in ("httpx2", "httpx"):  # newer Anthropic SDKs are built on httpx2
        lib: Any = importlib.import_module(name)

        def capture(request: Any, lib: Any = lib) -> Any:
            captured.append(json.loads(request.content))
            return lib.Response(200, json=ANTHROPIC_ANSWER)

        try:
            http = lib.Client(transport=lib.MockTransport(capture))
            return anthropic.Anthropic(api_key="sk-x", http_client=http)
        except TypeError:
            continue
    raise AssertionError("no httpx flavour accepted")


def test_anthropic_sdk_accepts_the_kwargs(sdk: Client) -> None:
    model = "claude-haiku-4-5"
    conv_id = _conversation(sdk, model)
    kwargs = sdk.chat_kwargs(conv_id, model=model, format="anthropic")
    assert set(kwargs) == {"model", "system", "messages", "tools", "max_tokens"}
    context = sdk.context.get(conv_id, model=model, format="anthropic")
    # the room kept for the answer: the model's max output capped at a quarter of the window
    assert kwargs["max_tokens"] == min(64_000, context.context_limit // 4)
    assert kwargs["max_tokens"] <= context.context_limit - context.token_count
    assert kwargs["tools"][0]["name"] == "search" and "input_schema" in kwargs["tools"][0]
    captured: list[dict[str, Any]] = []
    _anthropic_capturing(captured).messages.create(**kwargs, timeout=600.0)
    assert captured == [kwargs]
    roles = [m["role"] for m in kwargs["messages"]]
    assert roles[0] == "user" and "system" not in roles


def test_max_tokens_follows_the_options_and_the_override(sdk: Client) -> None:
    model = "claude-haiku-4-5"
    conv_id = _conversation(sdk, model)
    given = sdk.chat_kwargs(
        conv_id, model=model, format="anthropic", options={"max_output_tokens": 1234}
    )
    assert given["max_tokens"] == 1234
    assert (
        sdk.chat_kwargs(conv_id, model=model, format="anthropic", max_tokens=99)["max_tokens"] == 99
    )
    plain = sdk.chat_kwargs(sdk.conversations.create(model="gpt-4o").id, model="gpt-4o")
    assert "tools" not in plain  # no tools: none sent
