"""`chat_kwargs(format="anthropic")` into the Anthropic SDK: `system`, `messages`, `tools`
and `max_tokens` (the room contextq kept for the answer).

Sends nothing: the Anthropic client gets an httpx transport that captures the request
and answers a canned message (drop `http_client=…` to call Anthropic).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

import anthropic

from contextq import Client

MODEL = "claude-haiku-4-5"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_release",
            "description": "Find a release date. Give the product name.",
            "parameters": {"type": "object", "properties": {"product": {"type": "string"}}},
        },
    }
]
CANNED = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "Friday."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 2},
}


def offline_anthropic(handler: Callable[[Any], dict[str, Any]]) -> anthropic.Anthropic:
    """An Anthropic client whose requests go to `handler` (newer SDKs use httpx2)."""
    for name in ("httpx2", "httpx"):
        try:
            lib: Any = importlib.import_module(name)
            transport = lib.MockTransport(
                lambda request, lib=lib: lib.Response(200, json=handler(request))
            )
            return anthropic.Anthropic(
                api_key="sk-offline", http_client=lib.Client(transport=transport)
            )
        except (ImportError, TypeError):
            continue
    raise RuntimeError("no httpx flavour the Anthropic SDK accepts")


def main() -> None:
    sent: list[dict[str, object]] = []

    def capture(request: Any) -> dict[str, Any]:
        sent.append(json.loads(request.content))
        return CANNED

    llm = offline_anthropic(capture)
    with Client() as client:
        conv = client.conversations.create(model=MODEL, tools=TOOLS)
        client.messages.create(conv.id, role="user", content="When do we ship?")
        kwargs = client.chat_kwargs(conv.id, model=MODEL, format="anthropic")
        # max_tokens is the whole room kept for the answer (often > 21K tokens): the SDK
        # then wants streaming, or a timeout chosen by the caller
        answer = llm.messages.create(**kwargs, timeout=600.0)
    body = sent[0]
    print(f"sent: {sorted(body)}; max_tokens={body['max_tokens']}")
    print(f"tools: {[t['name'] for t in body['tools']]}")  # type: ignore[attr-defined]
    print(f"answer: {answer.content[0].text}")  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
