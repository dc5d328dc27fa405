"""Reasoning through the integrations and back to the model (docs/sdk.md): real PydanticAI
agents on PydanticAI's own Anthropic, OpenAI Responses and Google models (each vendor's
endpoint a capturing fake: nothing leaves the machine), and a real LangGraph agent on
LangChain's fake chat model. The model's first turn thinks and calls a tool; on the next
call, what the model is sent (contextq's context) holds that reasoning exactly as the
vendor returned it.

These need the server's verbatim rendering of a native payload into its own format
(before it, the stored rows are checked and the reasoning is missing from the context)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from contextq_client import Client
from tests.sdk import vendor_loops as vl
from tests.support.api import in_process_client

Answers = list[dict[str, Any]]


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    with (
        in_process_client() as http,
        Client("http://testserver", api_key=owner.key, http_client=http) as client,
    ):
        yield client


def _endpoint(lib: Any, answers: Answers, captured: list[dict[str, Any]]) -> Callable[[Any], Any]:
    """A vendor endpoint that records each request body and answers the next answer."""

    def handle(request: Any) -> Any:
        captured.append(json.loads(request.content))
        return lib.Response(200, json=answers[len(captured) - 1])

    return handle


def _run_agent(sdk: Client, model: Any, vendor_model: str) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory

    from contextq_client.integrations.pydantic_ai import history_processor

    conv = sdk.conversations.create(model=vendor_model)
    processor = history_processor(sdk, conversation_id=conv.id, model=vendor_model)
    agent = Agent(
        model, capabilities=[ProcessHistory(processor)], model_settings={"max_tokens": 1024}
    )

    @agent.tool_plain
    def release(p: str) -> str:
        """The release date of a project."""
        return "Friday"

    output = asyncio.run(agent.run("When do we ship?")).output
    assert output == vl.FINAL
    return conv.id


def test_pydantic_ai_anthropic_thinking_goes_back_to_claude(sdk: Client) -> None:
    import httpx2
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    first = vl.anthropic_loop().steps[0].response.to_dict(mode="json")
    first["content"][2]["name"] = "release"
    last = vl.anthropic_loop().steps[2].response.to_dict(mode="json")
    captured: list[dict[str, Any]] = []
    http = httpx2.AsyncClient(
        transport=httpx2.MockTransport(_endpoint(httpx2, [first, last], captured))
    )
    model = AnthropicModel(
        "claude-opus-4-7", provider=AnthropicProvider(api_key="x", http_client=http)
    )
    conv_id = _run_agent(sdk, model, "claude-opus-4-7")
    stored = [
        r.native.payload for r in sdk.messages.iter(conv_id) if r.role == "assistant" and r.native
    ]
    assert stored[0]["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "signature": vl.ANTHROPIC_SIGS[0],
    }
    # the second call: Claude gets its thinking block back, signature and empty text intact
    sent = [m for m in captured[1]["messages"] if m["role"] == "assistant"]
    assert sent[-1]["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "signature": vl.ANTHROPIC_SIGS[0],
    }
    assert [b["type"] for b in sent[-1]["content"]] == ["thinking", "text", "tool_use"]


def test_pydantic_ai_responses_reasoning_goes_back_to_openai(sdk: Client) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    first = vl.responses_loop().steps[0].response.to_dict(mode="json")
    last = vl.responses_loop().steps[2].response.to_dict(mode="json")
    captured: list[dict[str, Any]] = []
    http = httpx.AsyncClient(
        transport=httpx.MockTransport(_endpoint(httpx, [first, last], captured))
    )
    client = AsyncOpenAI(api_key="sk-x", http_client=http)
    model = OpenAIResponsesModel("gpt-5.5", provider=OpenAIProvider(openai_client=client))
    conv_id = _run_agent(sdk, model, "gpt-5.5")
    stored = [
        r.native.payload for r in sdk.messages.iter(conv_id) if r.role == "assistant" and r.native
    ]
    assert stored[0][0]["type"] == "reasoning"
    assert stored[0][0]["encrypted_content"] == vl.OPENAI_ENCRYPTED[0]
    sent = captured[1]["input"]
    (reasoning,) = [i for i in sent if i.get("type") == "reasoning"]
    assert reasoning["id"] == "rs_01" and reasoning["encrypted_content"] == vl.OPENAI_ENCRYPTED[0]
    assert reasoning["summary"] == [{"type": "summary_text", "text": vl.THOUGHTS[0]}]
    kinds = [i.get("type") for i in sent]
    assert kinds.index("reasoning") + 1 == kinds.index("function_call")  # the pair kept


def test_pydantic_ai_gemini_thought_signatures_go_back_to_gemini(sdk: Client) -> None:
    from google import genai
    from google.genai import types
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    first = vl.gemini_json(vl.gemini_loop().steps[0].response)
    last = vl.gemini_json(vl.gemini_loop().steps[2].response)
    captured: list[dict[str, Any]] = []
    http = httpx.AsyncClient(
        transport=httpx.MockTransport(_endpoint(httpx, [first, last], captured))
    )
    client = genai.Client(api_key="x", http_options=types.HttpOptions(httpx_async_client=http))
    model = GoogleModel("gemini-3-pro-preview", provider=GoogleProvider(client=client))
    conv_id = _run_agent(sdk, model, "gemini-3-pro-preview")
    stored = [
        r.native.payload for r in sdk.messages.iter(conv_id) if r.role == "assistant" and r.native
    ]
    call = next(p for p in stored[0]["parts"] if "functionCall" in p)
    assert base64.b64decode(call["thoughtSignature"]) == vl.GEMINI_SIG_BYTES[0]
    models = [c for c in captured[1]["contents"] if c["role"] == "model"]
    sent = next(p for p in models[-1]["parts"] if "functionCall" in p)
    # Gemini gets its own signature back on the call it rode on (not the dummy)
    assert base64.urlsafe_b64decode(sent["thoughtSignature"]) == vl.GEMINI_SIG_BYTES[0]
    assert any(p.get("thought") and p.get("text") == vl.THOUGHTS[0] for p in models[-1]["parts"])


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_langgraph_reasoning_blocks_go_back_to_the_model(sdk: Client) -> None:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langgraph.prebuilt import create_react_agent

    from contextq_client.integrations.langgraph import pre_model_hook

    class Fake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    inputs: list[list[BaseMessage]] = []

    class Record(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            inputs.append(list(messages[0]))

    signature = vl.ANTHROPIC_SIGS[1]
    thinking = AIMessage(
        content=[
            {"type": "thinking", "thinking": vl.THOUGHTS[0], "signature": signature},
            {"type": "redacted_thinking", "data": vl.REDACTED},
        ],
        tool_calls=[
            {"id": "toolu_01", "name": "release", "args": {"p": "sdk"}, "type": "tool_call"}
        ],
        response_metadata={"model_provider": "anthropic"},
    )
    answer = AIMessage(vl.FINAL, response_metadata={"model_provider": "anthropic"})

    def release(p: str) -> str:
        """The release date of a project."""
        return "Friday"

    conv = sdk.conversations.create(model="claude-opus-4-7")
    hook = pre_model_hook(sdk, conversation_id=conv.id, model="claude-opus-4-7")
    graph = create_react_agent(
        Fake(messages=iter([thinking, answer])), tools=[release], pre_model_hook=hook
    )
    graph.invoke({"messages": [("user", "When do we ship?")]}, config={"callbacks": [Record()]})
    (back,) = [m for m in inputs[1] if isinstance(m, AIMessage)]
    assert back.content[:2] == thinking.content  # the blocks as Claude returned them
    reasoning = [b for b in back.content_blocks if b["type"] == "reasoning"]
    assert reasoning[0]["extras"]["signature"] == signature
    assert back.tool_calls[0]["id"] == "toolu_01"
