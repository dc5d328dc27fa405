"""`client.messages.record`: what the vendor SDKs return (built offline with their own
types), stored natively with its model, byte for byte; each vendor's three-step tool
loop recorded with one line per step; the conversation then read in the OpenAI and
Anthropic formats (valid for the SDKs' types, no other vendor's opaque state).

The same loops read in the Responses and Gemini formats: `test_record_formats.py`; read
back in their own format with the reasoning: `test_record_reasoning.py`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from contextq_client import AsyncClient, Client, ValidationError
from contextq_client.chat_kwargs import chat_kwargs_from
from contextq_client.record import record_body
from tests.sdk import vendor_loops as vl
from tests.support.api import in_process_client

BASE = "http://testserver"


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    with in_process_client() as http, Client(BASE, api_key=owner.key, http_client=http) as client:
        yield client


# ---------------------------------------------------------------- the bodies (offline)


def test_an_anthropic_message_is_its_content_as_the_api_sent_it() -> None:
    loop = vl.anthropic_loop()
    message = loop.steps[1].response
    body = record_body(message)
    assert body == {
        "format": "anthropic",
        "messages": [{"role": "assistant", "content": message.to_dict(mode="json")["content"]}],
        "model": "claude-opus-4-7",
    }
    blocks = body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "redacted_thinking", "tool_use", "tool_use"]
    # no field the API never sent (the SDK's None defaults: `caller`, `toolset_name`)
    assert set(blocks[2]) == {"id", "input", "name", "type"}
    empty = record_body(loop.steps[0].response)["messages"][0]["content"][0]
    assert empty == {"signature": vl.ANTHROPIC_SIGS[0], "thinking": "", "type": "thinking"}
    assert record_body(message.to_dict()) == body  # its dict, the same body
    assert record_body(message, model="claude-fable-5")["model"] == "claude-fable-5"


def test_an_openai_response_is_its_output_items_by_their_api_names() -> None:
    response = vl.responses_loop().steps[1].response
    body = record_body(response)
    assert body["format"] == "responses" and body["model"] == "gpt-5.5"
    assert body["items"] == response.to_dict(mode="json")["output"]
    assert [i["type"] for i in body["items"]] == ["reasoning", "message", "function_call"]
    reasoning, message, call = body["items"]
    assert reasoning["encrypted_content"] == vl.OPENAI_ENCRYPTED[1]
    assert message["phase"] == "commentary"
    assert "async_" not in call and None not in call.values()  # API names, only what was sent
    assert record_body(json.loads(response.to_json())) == body


def test_a_gemini_response_is_its_first_candidate_in_rest_json() -> None:
    response = vl.gemini_loop().steps[1].response
    body = record_body(response)
    assert body["format"] == "gemini" and body["model"] == "gemini-3-pro-preview"
    (content,) = body["contents"]
    assert content["role"] == "model"
    thought, first, second = content["parts"]
    assert thought == {"text": vl.THOUGHTS[1], "thought": True}
    # REST camelCase, the signature's bytes as base64; the second parallel call has none
    assert first == {
        "functionCall": {"args": {}, "name": "freeze"},
        "thoughtSignature": vl.GEMINI_SIGS[1],
    }
    assert second == {"functionCall": {"args": {"p": "api"}, "name": "release"}}
    assert record_body(vl.gemini_json(response)) == body
    snake = response.to_json_dict()  # google-genai's own snake_case dict names the model too
    assert record_body(snake)["model"] == "gemini-3-pro-preview"


def test_a_chat_completion_is_its_message_in_the_default_form() -> None:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "annotations": [],
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "release", "arguments": "{}"},
                            }
                        ],
                    },
                }
            ],
        }
    )
    assert record_body(completion) == {
        "messages": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "release", "arguments": "{}"},
                    }
                ],
            }
        ]
    }


def test_turns_the_agent_built_name_their_format() -> None:
    results = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
    }
    assert record_body(results, format="anthropic") == {
        "format": "anthropic",
        "messages": [results],
    }
    outputs = [{"type": "function_call_output", "call_id": "c", "output": "x"}]
    assert record_body(outputs, format="responses", model="m") == {
        "format": "responses",
        "items": outputs,
        "model": "m",
    }
    gemini = vl.gemini_loop().steps[0].results
    assert record_body(gemini, format="gemini") == {
        "format": "gemini",
        "contents": [vl.gemini_json(gemini)],
    }
    assert record_body({"role": "user", "content": "hi"}, format="openai") == {
        "messages": [{"role": "user", "content": "hi"}]
    }


@pytest.mark.parametrize(
    ("response", "fmt", "says"),
    [
        ({"role": "user", "content": "hi"}, None, "format='anthropic'|'responses'"),
        (object(), None, "not object"),
        ({"candidates": []}, None, "no content to record"),
        ({"candidates": [{"finishReason": "SAFETY"}]}, None, "(finish reason SAFETY)"),
        ({"role": "user", "content": "hi"}, "bedrock", "format must be one of"),
    ],
)
def test_what_record_refuses_says_what_it_takes(response: Any, fmt: Any, says: str) -> None:
    with pytest.raises((ValueError, TypeError)) as err:
        record_body(response, format=fmt)
    assert says in str(err.value)


def test_a_response_recorded_under_another_format_is_refused() -> None:
    with pytest.raises(ValueError, match="this is a responses response, not format='gemini'"):
        record_body(vl.responses_loop().steps[0].response, format="gemini")


# ---------------------------------------------------------------- through the API


@pytest.mark.parametrize("vendor", list(vl.LOOPS))
def test_a_recorded_loop_is_stored_natively_byte_for_byte(sdk: Client, vendor: str) -> None:
    loop = vl.LOOPS[vendor]()
    conv_id = vl.record_loop(sdk, loop)
    rows = list(sdk.messages.iter(conv_id))
    assert all(row.native is not None and row.native.format == vendor for row in rows)
    payloads = [row.native.payload for row in rows if row.native is not None]
    assert vl.dumps(vl.rejoin(vendor, payloads)) == vl.dumps(loop.turns())
    assistants = [row for row in rows if row.role == "assistant"]
    assert len(assistants) == 3 and {row.native.model for row in assistants if row.native} == {
        loop.model
    }
    assert assistants[-1].content == vl.FINAL  # the visible text, never the thinking
    calls = [call["id"] for row in assistants for call in row.tool_calls or ()]
    answered = [row.tool_call_id for row in rows if row.role == "tool"]
    assert calls == answered and len(calls) == (3 if vendor != "responses" else 2)


OTHER_FORMATS = [(v, t) for v in vl.LOOPS for t in ("openai", "anthropic") if v != t]


@pytest.mark.parametrize(("vendor", "target"), OTHER_FORMATS)
def test_a_recorded_loop_reads_in_another_format_without_foreign_state(
    sdk: Client, vendor: str, target: str
) -> None:
    loop = vl.LOOPS[vendor]()
    conv_id = vl.record_loop(sdk, loop)
    model = "claude-opus-4-7" if target == "anthropic" else "gpt-4o"
    kwargs = sdk.chat_kwargs(conv_id, model=model, format=target)  # type: ignore[arg-type]
    vl.validate(target, kwargs)
    vl.check_no_foreign_state(loop, kwargs)
    vl.check_tool_loop(loop, target, kwargs)
    text = vl.dumps(kwargs)
    assert vl.FINAL in text and "Friday" in text and "Thursday" in text


def test_record_refusals_are_the_apis_422(sdk: Client) -> None:
    conv = sdk.conversations.create(model="claude-opus-4-7")
    orphan = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}],
    }
    with pytest.raises(ValidationError) as err:
        sdk.messages.record(conv.id, orphan, format="anthropic")
    assert "messages[0].content[0].tool_use_id" in str(err.value.detail)
    assert sdk.conversations.get(conv.id).message_count == 0


def test_the_async_client_records_the_same(stack: Any, owner: Any) -> None:
    import httpx

    from api.main import create_app

    loop = vl.anthropic_loop()

    async def scenario() -> list[Any]:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app()))
        async with AsyncClient(BASE, api_key=owner.key, http_client=http) as client:
            conv = await client.conversations.create(model=loop.model)
            await client.messages.record(conv.id, loop.user, format="anthropic")
            stored = await client.messages.record(conv.id, loop.steps[0].response)
            return [row.native.payload for row in stored.data if row.native]

    assert asyncio.run(scenario()) == loop.turns()[1:2]


def test_chat_kwargs_from_a_context_in_each_format() -> None:
    """The four shapes from one answer (the server's fields for each format)."""
    from contextq_client.models import Context

    base = _answer()
    tools = [
        {"type": "function", "name": "release", "parameters": {"type": "object"}, "strict": False}
    ]
    responses = Context.model_validate(
        {
            **base,
            "format": "responses",
            "instructions": "Be brief.",
            "tools": tools,
            "input": [{"type": "message", "role": "user", "content": "hi"}],
        }
    )
    kwargs = chat_kwargs_from(responses, format="responses", max_tokens=500)
    assert kwargs == {
        "model": "gpt-5.5",
        "instructions": "Be brief.",
        "input": [{"type": "message", "role": "user", "content": "hi"}],
        "tools": tools,
        "max_output_tokens": 500,
    }
    vl.validate("responses", kwargs)
    declarations = [{"function_declarations": [{"name": "release", "parameters_json_schema": {}}]}]
    gemini = Context.model_validate(
        {
            **base,
            "format": "gemini",
            "tools": declarations,
            "system_instruction": {"parts": [{"text": "Be brief."}]},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        }
    )
    kwargs = chat_kwargs_from(gemini, format="gemini")
    assert kwargs == {
        "model": "gpt-5.5",
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "config": {"system_instruction": {"parts": [{"text": "Be brief."}]}, "tools": declarations},
    }
    vl.validate("gemini", kwargs)
    assert gemini.turns == kwargs["contents"] and responses.turns == responses.input
    with pytest.raises(ValueError, match="format must be one of openai, anthropic"):
        chat_kwargs_from(gemini, format="bedrock")  # type: ignore[arg-type]


def _answer() -> dict[str, Any]:
    parts = ("system", "custom_agent", "summary", "project", "files", "history", "reasoning")
    zero = dict.fromkeys((*parts, "reminders"), 0)
    return {
        "conversation_id": "c",
        "model": "gpt-5.5",
        "provider": "openai",
        "format": "openai",
        "context_limit": 400000,
        "budget_tokens": 300000,
        "max_output_tokens": 1000,
        "token_count": 10,
        "token_count_method": "exact",
        "token_count_encoding": "o200k_base",
        "token_count_family": None,
        "token_count_factors": None,
        "token_breakdown": zero,
        "strategy": "noop",
        "filtered": False,
        "compaction_id": None,
        "kept_message_count": 1,
        "removed_message_ids": [],
        "pending_file_ids": [],
        "failed_file_ids": [],
        "file_notes": [],
        "citations": [],
        "tools": [],
        "cleared_tool_result_ids": [],
        "reasoning_dropped": {"other_vendor": 0, "earlier_turns": 0, "prefix_changed": 0},
        "usage_before": 0.0,
        "usage_after": 0.0,
        "filter_duration_ms": 0.0,
        "error": None,
        "warnings": [],
        "duration_ms": 1.0,
        "original_message_count": 1,
        "original_tokens": 10,
    }
