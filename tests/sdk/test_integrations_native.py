"""The integrations' conversions between the frameworks' messages and each vendor's own
turns (offline, with the real libraries and the vendor SDKs' types), and the model's
turns stored natively through the API by a real agent run.

- PydanticAI: `ThinkingPart` (content, id, signature, provider_name), the redacted
  form, text and tool calls → Anthropic blocks, Responses items, Gemini parts with
  their thought signatures; and back, the same parts.
- LangChain: Anthropic `thinking` blocks and standard reasoning blocks (signature in
  `extras`), Responses reasoning blocks, Gemini signatures → the same; and back, an
  `AIMessage` whose `content_blocks` give the reasoning with its signature.

The context giving the reasoning back to the model: `test_integrations_reasoning.py`."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import TypeAdapter

from contextq_client import Client
from contextq_client.models import Context
from tests.sdk import vendor_loops as vl
from tests.support.api import in_process_client

SIG = vl.ANTHROPIC_SIGS[0]
GEMINI_SIG = base64.b64encode(b"pydantic-ai keeps it as base64").decode()


def _context(fmt: str, **fields: Any) -> Context:
    from tests.sdk.test_record import _answer

    return Context.model_validate({**_answer(), "format": fmt, **fields})


# ---------------------------------------------------------------- PydanticAI


def _pai_response(provider: str) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

    return ModelResponse(
        parts=[
            ThinkingPart("", signature=SIG, provider_name="anthropic"),
            ThinkingPart(
                "", id="redacted_thinking", signature=vl.REDACTED, provider_name="anthropic"
            ),
            ThinkingPart(
                "Check the tracker.", signature=vl.ANTHROPIC_SIGS[1], provider_name="anthropic"
            ),
            ThinkingPart("foreign", signature="sig-of-another", provider_name="bedrock"),
            ThinkingPart("unsigned"),
            TextPart("Let me look."),
            ToolCallPart("release", {"p": "sdk"}, "toolu_01"),
        ],
        model_name="claude-opus-4-7",
        provider_name=provider,
    )


def test_pydantic_ai_thinking_as_anthropic_blocks_and_back() -> None:
    from anthropic.types import MessageParam
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolReturnPart

    from contextq_client.integrations import pydantic_ai_native as native

    response = _pai_response("anthropic")
    turn = native.anthropic_turn(response)
    assert turn == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "", "signature": SIG},
            {"type": "redacted_thinking", "data": vl.REDACTED},
            {
                "type": "thinking",
                "thinking": "Check the tracker.",
                "signature": vl.ANTHROPIC_SIGS[1],
            },
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "release", "input": {"p": "sdk"}},
        ],
    }  # another provider's reasoning and unsigned reasoning: no native place, never text
    TypeAdapter(MessageParam).validate_python(turn)
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Friday"}
    context = _context(
        "anthropic",
        system=[{"type": "text", "text": "Be brief."}],
        messages=[
            {"role": "user", "content": "When?"},
            turn,
            {"role": "user", "content": [result]},
        ],
    )
    request, back, results = native.from_anthropic(context)
    assert isinstance(request, ModelRequest) and isinstance(back, ModelResponse)
    assert [p.part_kind for p in request.parts] == ["system-prompt", "user-prompt"]
    assert back.parts == [p for p in response.parts[:3]] + response.parts[5:]  # identical parts
    assert back.provider_name == "anthropic"
    assert isinstance(results, ModelRequest)
    (tool_return,) = results.parts
    assert isinstance(tool_return, ToolReturnPart) and tool_return.tool_name == "release"


def test_pydantic_ai_reasoning_as_responses_items_and_back() -> None:
    from openai.types.responses import ResponseInputItemParam
    from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

    from contextq_client.integrations import pydantic_ai_native as native

    parts = [  # as PydanticAI's OpenAIResponsesModel records a reasoning item of 2 summaries
        ThinkingPart("First.", id="rs_01", signature="gAAAenc", provider_name="openai"),
        ThinkingPart("Second.", id="rs_01", provider_name="openai"),
        TextPart(
            "Now the freeze.",
            id="msg_01",
            provider_name="openai",
            provider_details={"phase": "commentary"},
        ),
        ToolCallPart("freeze", '{"p": "api"}', "call_01", id="fc_01", provider_name="openai"),
    ]
    items = native.responses_items(ModelResponse(parts=parts, provider_name="openai"))
    assert items == [
        {
            "type": "reasoning",
            "id": "rs_01",
            "summary": [
                {"type": "summary_text", "text": "First."},
                {"type": "summary_text", "text": "Second."},
            ],
            "encrypted_content": "gAAAenc",
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_01",
            "status": "completed",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": "Now the freeze.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_01",
            "name": "freeze",
            "arguments": '{"p": "api"}',
            "id": "fc_01",
        },
    ]
    for item in items:
        TypeAdapter(ResponseInputItemParam).validate_python(item)
    context = _context(
        "responses",
        instructions="Be brief.",
        input=[{"type": "message", "role": "user", "content": "When?"}, *items],
    )
    _, back = native.from_responses(context)
    assert isinstance(back, ModelResponse)
    assert back.parts == parts


def test_pydantic_ai_gemini_signatures_ride_on_their_parts_and_back() -> None:
    from google.genai import types
    from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

    from contextq_client.integrations import pydantic_ai_gemini as native

    signed = {"thought_signature": GEMINI_SIG}
    parts = [  # as PydanticAI's GoogleModel records them: the signature in provider_details
        ThinkingPart("Two lookups.", provider_name="google-gla"),
        ToolCallPart(
            "release", {"p": "sdk"}, "pyd_ai_1", provider_name="google-gla", provider_details=signed
        ),
        ToolCallPart("freeze", {}, "pyd_ai_2"),
        TextPart(
            "Checking.", provider_name="google-gla", provider_details={"thought_signature": "c2ln"}
        ),
    ]
    content = native.gemini_content(ModelResponse(parts=parts, provider_name="google-gla"))
    assert content == {
        "role": "model",
        "parts": [
            {"text": "Two lookups.", "thought": True},
            {
                "functionCall": {"name": "release", "args": {"p": "sdk"}, "id": "pyd_ai_1"},
                "thoughtSignature": GEMINI_SIG,
            },
            {"functionCall": {"name": "freeze", "args": {}, "id": "pyd_ai_2"}},
            {"text": "Checking.", "thoughtSignature": "c2ln"},
        ],
    }
    types.Content.model_validate(content)
    context = _context(
        "gemini",
        system_instruction={"parts": [{"text": "Be brief."}]},
        contents=[{"role": "user", "parts": [{"text": "When?"}]}, content],
    )
    _, back = native.from_gemini(context)
    assert isinstance(back, ModelResponse)
    assert back.parts == parts
    other = ToolCallPart("x", {}, "c", provider_name="anthropic", provider_details=signed)
    foreign = native.gemini_content(ModelResponse(parts=[other]))
    assert foreign is not None and "thoughtSignature" not in foreign["parts"][0]


def test_pydantic_ai_picks_the_format_of_the_runs_model() -> None:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.google import GoogleProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    from contextq_client.integrations.pydantic_ai import run_format

    openai = OpenAIProvider(api_key="sk-x")
    assert run_format(
        AnthropicModel("claude-opus-4-7", provider=AnthropicProvider(api_key="x"))
    ) == ("anthropic", "anthropic")
    assert run_format(OpenAIResponsesModel("gpt-5.5", provider=openai)) == ("responses", "openai")
    assert run_format(OpenAIChatModel("gpt-4o", provider=openai)) == ("openai", "openai")
    assert (
        run_format(GoogleModel("gemini-3-pro-preview", provider=GoogleProvider(api_key="x")))[0]
        == "gemini"
    )
    assert run_format(FunctionModel(lambda m, i: None))[0] == "openai"  # type: ignore[arg-type,return-value]


# ---------------------------------------------------------------- LangChain


def test_langchain_thinking_and_standard_reasoning_as_anthropic_blocks_and_back() -> None:
    from anthropic.types import MessageParam
    from langchain_core.messages import AIMessage, ToolMessage

    from contextq_client.integrations import langchain_native as native

    call = {"id": "toolu_01", "name": "release", "args": {"p": "sdk"}, "type": "tool_call"}
    anthropic_style = AIMessage(
        content=[
            {"type": "thinking", "thinking": "", "signature": SIG, "index": 0},
            {"type": "redacted_thinking", "data": vl.REDACTED},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "release", "input": {"p": "sdk"}},
        ],
        tool_calls=[call],
        response_metadata={"model_provider": "anthropic"},
    )
    standard = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "", "extras": {"signature": SIG}},
            {"type": "non_standard", "value": {"type": "redacted_thinking", "data": vl.REDACTED}},
            {"type": "reasoning", "reasoning": "no signature: no native place"},
            {"type": "text", "text": "Let me look."},
        ],
        tool_calls=[call],
    )
    turn = native.anthropic_turn(anthropic_style)
    assert turn == native.anthropic_turn(standard)
    assert turn == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "", "signature": SIG},
            {"type": "redacted_thinking", "data": vl.REDACTED},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "release", "input": {"p": "sdk"}},
        ],
    }
    TypeAdapter(MessageParam).validate_python(turn)
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Friday"}
    context = _context(
        "anthropic",
        messages=[
            {"role": "user", "content": "When?"},
            turn,
            {"role": "user", "content": [result]},
        ],
    )
    _, back, answer = native.from_anthropic(context)
    assert isinstance(back, AIMessage) and back.content == turn["content"]
    assert back.tool_calls == [call]
    reasoning = [b for b in back.content_blocks if b["type"] == "reasoning"]
    assert reasoning == [{"type": "reasoning", "reasoning": "", "extras": {"signature": SIG}}]
    assert isinstance(answer, ToolMessage) and answer.tool_call_id == "toolu_01"


def test_langchain_responses_reasoning_and_back() -> None:
    from langchain_core.messages import AIMessage
    from openai.types.responses import ResponseInputItemParam

    from contextq_client.integrations import langchain_native as native

    reasoning = {
        "type": "reasoning",
        "id": "rs_01",
        "summary": [{"type": "summary_text", "text": "Look it up."}],
        "encrypted_content": "gAAAenc",
    }
    message = AIMessage(  # langchain-openai's responses/v1 content
        content=[
            reasoning,
            {"type": "text", "text": "Checking.", "annotations": [], "id": "msg_01"},
        ],
        tool_calls=[
            {"id": "call_01", "name": "release", "args": {"p": "sdk"}, "type": "tool_call"}
        ],
        response_metadata={"model_provider": "openai", "id": "resp_01"},
    )
    items = native.responses_items(message)
    assert items[0] == reasoning
    assert items[1]["id"] == "msg_01" and items[1]["content"][0]["text"] == "Checking."
    assert items[2] == {
        "type": "function_call",
        "call_id": "call_01",
        "name": "release",
        "arguments": '{"p": "sdk"}',
    }
    for item in items:
        TypeAdapter(ResponseInputItemParam).validate_python(item)
    standard = AIMessage(  # langchain-core's standard blocks: one per summary, the item id
        content=[
            {
                "type": "reasoning",
                "id": "rs_01",
                "reasoning": "Look it up.",
                "extras": {"encrypted_content": "gAAAenc"},
            }
        ],
        tool_calls=message.tool_calls,
    )
    assert native.responses_items(standard)[0] == reasoning
    context = _context("responses", input=[{"role": "user", "content": "When?"}, *items])
    _, back = native.from_responses(context)
    assert isinstance(back, AIMessage) and back.content[0] == reasoning
    assert back.tool_calls[0]["id"] == "call_01"
    assert native.responses_items(back) == [*items[:2], {**items[2]}]
    blocks = [b for b in back.content_blocks if b["type"] == "reasoning"]
    assert blocks and blocks[0]["reasoning"] == "Look it up."


def test_langchain_gemini_signatures_and_back() -> None:
    from google.genai import types
    from langchain_core.messages import AIMessage

    from contextq_client.integrations import langchain_native as native

    message = AIMessage(  # as langchain-google-genai keeps them
        content=[
            {"type": "thinking", "thinking": "Two lookups.", "signature": GEMINI_SIG},
            {"type": "text", "text": ""},
        ],
        tool_calls=[{"id": "c1", "name": "release", "args": {"p": "sdk"}, "type": "tool_call"}],
        additional_kwargs={native.GEMINI_SIGNATURES: {"c1": vl.GEMINI_SIGS[0]}},
        response_metadata={"model_provider": "google_genai"},
    )
    content = native.gemini_content(message)
    assert content == {
        "role": "model",
        "parts": [
            {"text": "Two lookups.", "thought": True, "thoughtSignature": GEMINI_SIG},
            {
                "functionCall": {"name": "release", "args": {"p": "sdk"}, "id": "c1"},
                "thoughtSignature": vl.GEMINI_SIGS[0],
            },
        ],
    }
    types.Content.model_validate(content)
    context = _context("gemini", contents=[{"role": "user", "parts": [{"text": "When?"}]}, content])
    _, back = native.from_gemini(context)
    assert isinstance(back, AIMessage)
    assert back.additional_kwargs[native.GEMINI_SIGNATURES] == {"c1": vl.GEMINI_SIGS[0]}
    (reasoning,) = [b for b in back.content_blocks if b["type"] == "reasoning"]
    assert reasoning["extras"] == {"signature": GEMINI_SIG}
    assert native.gemini_content(back) == content


def test_langchain_picks_the_format_of_the_history() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from contextq_client.integrations.langgraph import history_format

    def ai(**meta: Any) -> AIMessage:
        return AIMessage("x", response_metadata=meta)

    assert history_format([HumanMessage("q")]) == "openai"
    assert history_format([ai(model_provider="anthropic")]) == "anthropic"
    assert history_format([ai(model_provider="google_genai")]) == "gemini"
    assert history_format([ai(model_provider="openai", id="resp_1")]) == "responses"
    assert history_format([ai(model_provider="openai", id="chatcmpl-1")]) == "openai"


# ---------------------------------------------------------------- stored by real agents


def _tool_calling_fake() -> type:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class Fake(GenericFakeChatModel):
        """LangChain's fake chat model, taking tools (it answers what it is given)."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    return Fake


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    with (
        in_process_client() as http,
        Client("http://testserver", api_key=owner.key, http_client=http) as client,
    ):
        yield client


def test_a_pydantic_ai_run_stores_its_thinking_natively(sdk: Client) -> None:
    import asyncio

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ThinkingPart,
        ToolCallPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from contextq_client.integrations.pydantic_ai import history_processor

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            thinking = ThinkingPart("Look it up.", signature=SIG, provider_name="anthropic")
            return ModelResponse(
                parts=[thinking, ToolCallPart("release", {"p": "sdk"}, "toolu_01")]
            )
        return ModelResponse(parts=[TextPart("Friday.")])

    conv = sdk.conversations.create(model="claude-opus-4-7")
    processor = history_processor(
        sdk, conversation_id=conv.id, format="anthropic", model="claude-opus-4-7"
    )
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(processor)])

    @agent.tool_plain
    def release(p: str) -> str:
        return "Friday"

    assert asyncio.run(agent.run("When do we ship?")).output == "Friday."
    rows = list(sdk.messages.iter(conv.id))
    assert [r.role for r in rows] == ["user", "assistant", "tool"]  # the last answer is new
    assistant = rows[1]
    assert assistant.native is not None and assistant.native.format == "anthropic"
    assert assistant.native.payload["content"][0] == {
        "type": "thinking",
        "thinking": "Look it up.",
        "signature": SIG,
    }
    assert assistant.tool_calls and assistant.tool_calls[0]["id"] == "toolu_01"
    assert rows[2].tool_call_id == "toolu_01" and rows[2].content == "Friday"


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_a_langgraph_run_stores_its_thinking_natively(sdk: Client) -> None:
    from langchain_core.messages import AIMessage
    from langgraph.prebuilt import create_react_agent

    from contextq_client.integrations.langgraph import pre_model_hook

    thinking = AIMessage(
        content=[{"type": "reasoning", "reasoning": "Look it up.", "extras": {"signature": SIG}}],
        tool_calls=[
            {"id": "toolu_01", "name": "release", "args": {"p": "sdk"}, "type": "tool_call"}
        ],
        response_metadata={"model_provider": "anthropic"},
    )
    answer = AIMessage("Friday.", response_metadata={"model_provider": "anthropic"})
    model = _tool_calling_fake()(messages=iter([thinking, answer]))

    def release(p: str) -> str:
        """The release date of a project."""
        return "Friday"

    conv = sdk.conversations.create(model="claude-opus-4-7")
    hook = pre_model_hook(sdk, conversation_id=conv.id, model="claude-opus-4-7")
    graph = create_react_agent(model, tools=[release], pre_model_hook=hook)
    state = graph.invoke({"messages": [("user", "When do we ship?")]})
    assert state["messages"][-1].content == "Friday."
    rows = list(sdk.messages.iter(conv.id))
    assert [r.role for r in rows] == ["user", "assistant", "tool"]
    assert rows[1].native is not None and rows[1].native.payload == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Look it up.", "signature": SIG},
            {"type": "tool_use", "id": "toolu_01", "name": "release", "input": {"p": "sdk"}},
        ],
    }
