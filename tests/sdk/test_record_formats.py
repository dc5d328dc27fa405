"""The Responses and Gemini formats from the client's side (docs/api.md#native-turns, docs/sdk.md):
each vendor's recorded tool loop read as `format=responses` and `format=gemini` (valid for the SDKs'
types, no other vendor's opaque state), and `chat_kwargs` of both formats through the
OpenAI and google-genai SDKs' own request building (a capturing transport; nothing is
sent).

These need the server's `format=responses` and `format=gemini` answers (the output-format
registry)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from contextq_client import Client
from tests.sdk import vendor_loops as vl
from tests.support.api import in_process_client

TOOL = {
    "name": "release",
    "description": "The release date of a project.",
    "input_schema": {"type": "object", "properties": {"p": {"type": "string"}}},
}
TARGET_MODELS = {"responses": "gpt-5.5", "gemini": "gemini-3-pro-preview"}
OTHER_FORMATS = [(v, t) for v in vl.LOOPS for t in ("responses", "gemini") if v != t]


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    with (
        in_process_client() as http,
        Client("http://testserver", api_key=owner.key, http_client=http) as client,
    ):
        yield client


@pytest.mark.parametrize(("vendor", "target"), OTHER_FORMATS)
def test_a_recorded_loop_reads_in_another_format_without_foreign_state(
    sdk: Client, vendor: str, target: str
) -> None:
    loop = vl.LOOPS[vendor]()
    conv_id = vl.record_loop(sdk, loop)
    kwargs = sdk.chat_kwargs(conv_id, model=TARGET_MODELS[target], format=target)  # type: ignore[arg-type]
    vl.validate(target, kwargs)
    vl.check_no_foreign_state(loop, kwargs)
    vl.check_tool_loop(loop, target, kwargs)
    text = vl.dumps(kwargs)
    assert vl.FINAL in text and "Friday" in text and "Thursday" in text


def _tool_loop(sdk: Client, model: str) -> str:
    conv = sdk.conversations.create(model=model, tools=[TOOL], system_prompt="Be brief.")
    sdk.messages.append(
        conv.id,
        [
            {"role": "user", "content": "When do we ship?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "release", "arguments": '{"p": "sdk"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "Friday"},
        ],
    )
    return conv.id


def _capturing(captured: list[dict[str, Any]], answer: dict[str, Any]) -> httpx.Client:
    def capture(request: httpx.Request) -> httpx.Response:
        captured.append(json.loads(request.content))
        return httpx.Response(200, json=answer)

    return httpx.Client(transport=httpx.MockTransport(capture))


def test_the_openai_sdk_sends_the_responses_kwargs_as_they_are(sdk: Client) -> None:
    import openai

    conv_id = _tool_loop(sdk, "gpt-5.5")
    kwargs = sdk.chat_kwargs(conv_id, model="gpt-5.5", format="responses")
    assert set(kwargs) == {"model", "instructions", "input", "tools"}
    assert "Be brief." in kwargs["instructions"]
    assert kwargs["tools"][0]["type"] == "function" and kwargs["tools"][0]["name"] == "release"
    vl.validate("responses", kwargs)
    captured: list[dict[str, Any]] = []
    answer = vl.responses_loop().steps[2].response.to_dict(mode="json")
    llm = openai.OpenAI(api_key="sk-x", http_client=_capturing(captured, answer))
    response = llm.responses.create(**kwargs)
    assert captured == [kwargs]
    assert response.output_text == vl.FINAL  # the SDK reads its answer (what record takes)
    calls = [i for i in kwargs["input"] if i.get("type") == "function_call"]
    outputs = [i for i in kwargs["input"] if i.get("type") == "function_call_output"]
    assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs] == ["call_1"]


def test_the_google_genai_sdk_takes_the_gemini_kwargs(sdk: Client) -> None:
    from google import genai
    from google.genai import types

    conv_id = _tool_loop(sdk, "gemini-3-pro-preview")
    kwargs = sdk.chat_kwargs(conv_id, model="gemini-3-pro-preview", format="gemini")
    assert set(kwargs) == {"model", "contents", "config"}
    assert set(kwargs["config"]) == {"system_instruction", "tools"}
    vl.validate("gemini", kwargs)
    captured: list[dict[str, Any]] = []
    answer = vl.gemini_json(vl.gemini_loop().steps[2].response)
    http = _capturing(captured, answer)
    llm = genai.Client(api_key="x", http_options=types.HttpOptions(httpx_client=http))
    response = llm.models.generate_content(**kwargs)
    assert response.text == vl.FINAL
    (body,) = captured
    sent = [types.Content.model_validate(c) for c in body["contents"]]
    assert sent == [types.Content.model_validate(c) for c in kwargs["contents"]]
    system = types.Content.model_validate(body["systemInstruction"])
    assert system == types.Content.model_validate(kwargs["config"]["system_instruction"])
    declared = body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["release"]
    parts = [p for c in kwargs["contents"] for p in c["parts"]]
    call = next(p for p in parts if "functionCall" in p or "function_call" in p)
    # a call of the current turn from another vendor carries the documented dummy
    assert call.get("thoughtSignature", call.get("thought_signature")) == vl.GEMINI_DUMMY
