"""Native turns as each vendor's SDK returns and takes them (docs/api.md#native-turns), for
the API and engine tests: Anthropic MessageParams, Responses items, Gemini Contents.

Each builder returns a fresh batch. The opaque values (signatures, encrypted content)
are made up but shaped as the vendors send them; `sdk_check` validates a batch with the
vendor's own SDK types, so the shapes are the real ones.
"""

from __future__ import annotations

import base64
import json
from typing import Any

SIG = "EqQBCkgIARABGAIiQLtB0gZ2m2p1d0bWxq4xY3Jm+2Zs9n7tqQ=="  # an opaque Anthropic signature
GEMINI_SIG = base64.b64encode(b"opaque gemini thought signature").decode()


def anthropic_tool_loop() -> list[dict[str, Any]]:
    """A user question, an assistant turn thinking (omitted display: thinking "") and
    calling a tool, its result, and the answer after more thinking."""
    return [
        {"role": "user", "content": "What does a.py print?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "", "signature": SIG},
                {"type": "text", "text": "Let me read it."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "read_file",
                    "input": {"path": "a.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "print(42)"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "It prints 42.", "signature": SIG + "b"},
                {"type": "text", "text": "It prints 42."},
            ],
        },
    ]


def anthropic_interleaved() -> list[dict[str, Any]]:
    """Several thinking blocks interleaved with text and calls, a redacted block, and
    two parallel calls answered in one user turn with text after the results."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "Compare a.py and b.py."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "First a.py.", "signature": SIG + "1"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
                {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"p": "a"}},
                {"type": "thinking", "thinking": "", "signature": SIG + "2"},
                {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"p": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x = 1"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": [{"type": "text", "text": "x = 2"}],
                    "is_error": False,
                },
                {"type": "text", "text": "Be brief."},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "1 vs 2", "signature": SIG + "3"},
                {"type": "text", "text": "a sets 1, "},
                {"type": "thinking", "thinking": "", "signature": SIG + "4"},
                {"type": "text", "text": "b sets 2."},
            ],
        },
    ]


def anthropic_server_tools() -> list[dict[str, Any]]:
    """A web search run by Anthropic (server_tool_use, web_search_tool_result with
    encrypted_content), a cited text with an encrypted_index, and a block type this
    version does not know, with an empty string and a null kept."""
    return [
        {"role": "user", "content": "Who won?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_01",
                    "name": "web_search",
                    "input": {"query": "final score"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_01",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://example.org/score",
                            "title": "Score",
                            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5",
                            "page_age": None,
                        }
                    ],
                },
                {
                    "type": "text",
                    "text": "The home side won.",
                    "citations": [
                        {
                            "type": "web_search_result_location",
                            "url": "https://example.org/score",
                            "title": "Score",
                            "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm",
                            "cited_text": "",
                        }
                    ],
                },
                {"type": "future_block", "opaque": {"z": 1, "a": [None, ""]}, "note": ""},
            ],
        },
    ]


def responses_loop() -> list[dict[str, Any]]:
    """A user message, the model's reasoning item, its function call, the output the
    agent adds, then reasoning and the answer (with `phase`)."""
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
        {
            "type": "reasoning",
            "id": "rs_01",
            "summary": [{"type": "summary_text", "text": "Look up the weather."}],
            "encrypted_content": "gAAAAABpZ3Jvd3RoX2VuY3J5cHRlZA==",
        },
        {
            "type": "function_call",
            "call_id": "call_01",
            "name": "weather",
            "arguments": '{"city":"Oslo"}',
            "id": "fc_01",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "call_01", "output": '{"temp": -3}'},
        {"type": "reasoning", "id": "rs_02", "summary": [], "encrypted_content": None},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_01",
            "status": "completed",
            "phase": "final_answer",
            "content": [{"type": "output_text", "text": "It is -3 °C.", "annotations": []}],
        },
    ]


def gemini_parallel() -> list[dict[str, Any]]:
    """A user content, a model step with two parallel calls (the signature on the first
    only, no ids) and a thought part, both responses, and the answer with a signature on
    its text."""
    return [
        {"role": "user", "parts": [{"text": "Weather in Oslo and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Two lookups.", "thought": True},
                {
                    "functionCall": {"name": "weather", "args": {"city": "Oslo"}},
                    "thoughtSignature": GEMINI_SIG,
                },
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"output": "-3"}}},
                {"functionResponse": {"name": "weather", "response": {"output": "18"}}},
            ],
        },
        {"role": "model", "parts": [{"text": "Oslo -3, Rome 18.", "thoughtSignature": "c2ln"}]},
    ]


# ---------------------------------------------------------------- batches an API refuses


def turn(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": list(blocks)}


USE = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
HELLO = {"role": "user", "content": "hello"}

# name → (body, the place its 422 names, words of its message)
REFUSED: dict[str, tuple[dict[str, Any], str, str]] = {
    "unanswered tool_result": (
        {"format": "anthropic", "messages": [HELLO, turn("user", RESULT)]},
        "messages[1].content[0].tool_use_id",
        "answers no call",
    ),
    "thinking without signature": (
        {
            "format": "anthropic",
            "messages": [HELLO, turn("assistant", {"type": "thinking", "thinking": "hm"})],
        },
        "messages[1].content[0].signature",
        "signature",
    ),
    "thinking with an empty signature": (
        {
            "format": "anthropic",
            "messages": [
                HELLO,
                turn("assistant", {"type": "thinking", "thinking": "", "signature": ""}),
            ],
        },
        "messages[1].content[0].signature",
        "signature",
    ),
    "redacted_thinking without data": (
        {
            "format": "anthropic",
            "messages": [HELLO, turn("assistant", {"type": "redacted_thinking"})],
        },
        "messages[1].content[0].data",
        "data",
    ),
    "tool_use without id": (
        {
            "format": "anthropic",
            "messages": [HELLO, turn("assistant", {"type": "tool_use", "name": "f", "input": {}})],
        },
        "messages[1].content[0].id",
        "id",
    ),
    "tool_use without name": (
        {
            "format": "anthropic",
            "messages": [HELLO, turn("assistant", {"type": "tool_use", "id": "t", "input": {}})],
        },
        "messages[1].content[0].name",
        "name",
    ),
    "text before a tool_result": (
        {
            "format": "anthropic",
            "messages": [
                HELLO,
                turn("assistant", USE),
                turn("user", {"type": "text", "text": "here:"}, RESULT),
            ],
        },
        "messages[2].content[1]",
        "come first",
    ),
    "anthropic role tool": (
        {"format": "anthropic", "messages": [HELLO, {"role": "tool", "content": "x"}]},
        "messages[1].role",
        "role",
    ),
    "functionResponse with no call": (
        {
            "format": "gemini",
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
            ],
        },
        "contents[1].parts[0].functionResponse.name",
        "answers no call",
    ),
    "role assistant in gemini contents": (
        {
            "format": "gemini",
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "assistant", "parts": [{"text": "hello"}]},
            ],
        },
        "contents[1].role",
        '"model"',
    ),
    "orphan function_call_output": (
        {
            "format": "responses",
            "items": [
                {"role": "user", "content": "hi"},
                {"type": "function_call_output", "call_id": "call_x", "output": "1"},
            ],
        },
        "items[1].call_id",
        "answers no call",
    ),
    "reasoning item with no following item": (
        {
            "format": "responses",
            "items": [
                {"role": "user", "content": "hi"},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
            ],
        },
        "items[1]",
        "following item",
    ),
    "reasoning item followed by a user message": (
        {
            "format": "responses",
            "items": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"role": "user", "content": "hi"},
            ],
        },
        "items[0]",
        "following item",
    ),
    "unknown format": (
        {"format": "bedrock", "messages": [HELLO]},
        "format",
        "anthropic, gemini, responses",
    ),
}


def dumps(value: Any) -> str:
    """JSON with keys in their order: equal strings are the same JSON, byte for byte."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sdk_check(fmt: str, batch: list[dict[str, Any]]) -> None:
    """Each turn validates as the vendor's SDK type (unknown block types aside)."""
    from pydantic import TypeAdapter

    if fmt == "anthropic":
        from anthropic.types import MessageParam

        adapter: Any = TypeAdapter(MessageParam)
        for turn in batch:
            content = turn["content"]
            if isinstance(content, list):
                content = [b for b in content if b["type"] != "future_block"]
            adapter.validate_python({**turn, "content": content})
    elif fmt == "responses":
        from openai.types.responses import ResponseInputItemParam

        adapter = TypeAdapter(ResponseInputItemParam)
        for item in batch:
            adapter.validate_python(item)
    else:
        from google.genai import types

        for content in batch:
            types.Content.model_validate(content)
