"""PydanticAI: a history processor that sends the model contextq's context.

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from contextq_client.integrations.pydantic_ai import history_processor

    processor = history_processor(client, conversation_id=conv.id, model="gpt-4o")
    agent = Agent(model, capabilities=[ProcessHistory(processor)])
    # (PydanticAI before the capabilities API: Agent(model, history_processors=[processor]))

Before each model request the run's new messages are appended to the conversation and
the processor returns the ready-to-send context (system prompt, compaction summary,
filtered history, files) as PydanticAI messages. Pass a `Client` (run in a thread) or an
`AsyncClient`.

contextq's built-in tools (read what a cleared stub names, list the workspace, search
the project, the memory) as PydanticAI tools, run on the conversation when the model
calls them:

    agent = Agent(model, tools=builtin_tools(client, conversation_id=conv.id), …)
    # AsyncClient: tools=await async_builtin_tools(client, conversation_id=conv.id)

Reasoning survives the round trip: the model's turns are stored in its vendor's own
format and the context is read in it (`format=`, by default from the run's model:
Anthropic → `anthropic`, OpenAI's Responses model → `responses`, Google → `gemini`, any
other → `openai`), so a `ThinkingPart` comes back with its `signature` and
`provider_name` (`pydantic_ai_native` and `pydantic_ai_gemini` have the mapping). The
user's prompts and the tool results go in the default form, as with any model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import RunContext, Tool

from contextq_client import AsyncClient, Client
from contextq_client.integrations import pydantic_ai_gemini as gemini
from contextq_client.integrations import pydantic_ai_native as native
from contextq_client.integrations import tools as builtin
from contextq_client.integrations.mirror import (
    HistoryMirror,
    Turn,
    Wire,
    async_sync_and_read,
    chat,
    sync_and_read,
)
from contextq_client.models import Context

OpenAIMessage = dict[str, Any]
Processor = Callable[[RunContext[Any], list[ModelMessage]], Awaitable[list[ModelMessage]]]
# PydanticAI's provider name of each native format (the `provider_name` of the parts
# built from it; Google's is the run's own, `google-gla` or `google-vertex`)
PROVIDERS: dict[Wire, str] = {
    "anthropic": "anthropic",
    "responses": "openai",
    "gemini": "google-gla",
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and "text" in p]
        return "\n".join(texts)
    return json.dumps(content, default=str)


def _request_parts(part: ModelRequestPart) -> list[OpenAIMessage]:
    if isinstance(part, SystemPromptPart):
        return [{"role": "system", "content": part.content}]
    if isinstance(part, UserPromptPart):
        return [{"role": "user", "content": _text(part.content)}]
    if isinstance(part, ToolReturnPart):
        content = part.model_response_str()
        return [{"role": "tool", "tool_call_id": part.tool_call_id, "content": content}]
    if isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            return [{"role": "user", "content": part.model_response()}]
        return [
            {"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response()}
        ]
    return []


def _response(message: ModelResponse) -> OpenAIMessage:
    text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
        }
        for p in message.parts
        if isinstance(p, ToolCallPart)
    ]
    out: OpenAIMessage = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    return out


def to_openai(messages: list[ModelMessage]) -> list[OpenAIMessage]:
    """PydanticAI messages as OpenAI chat messages (text, tool calls and results)."""
    out: list[OpenAIMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                out.extend(_request_parts(part))
        else:
            out.append(_response(message))
    return out


def _assistant(message: OpenAIMessage, names: dict[str, str]) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    if message.get("content"):
        parts.append(TextPart(content=_text(message["content"])))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        names[call["id"]] = function.get("name", "tool")
        parts.append(
            ToolCallPart(function.get("name", "tool"), function.get("arguments"), call["id"])
        )
    return ModelResponse(parts=parts)


def from_openai(messages: list[OpenAIMessage]) -> list[ModelMessage]:
    """OpenAI chat messages (contextq's context) as PydanticAI messages: consecutive
    system/user/tool messages make one request, each assistant message a response."""
    out: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []
    names: dict[str, str] = {}  # tool call id -> tool name
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            if pending:
                out.append(ModelRequest(parts=pending))
                pending = []
            out.append(_assistant(message, names))
        elif role == "system":
            pending.append(SystemPromptPart(content=_text(message.get("content"))))
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            name = names.get(call_id, str(message.get("name") or "tool"))
            pending.append(ToolReturnPart(name, _text(message.get("content")), call_id))
        else:
            pending.append(UserPromptPart(content=_text(message.get("content"))))
    if pending:
        out.append(ModelRequest(parts=pending))
    return out


def run_format(model: Any) -> tuple[Wire, str]:
    """The wire format of a run's model (wrappers looked through), and PydanticAI's
    provider name for it."""
    while getattr(model, "wrapped", None) is not None:
        model = model.wrapped
    system = str(getattr(model, "system", ""))
    if system == "anthropic":
        return "anthropic", system
    if system.startswith("google"):
        return "gemini", system
    if system == "openai" and "Responses" in type(model).__name__:
        return "responses", system
    return "openai", system


def to_turns(messages: list[ModelMessage], fmt: Wire, provider: str) -> list[Turn]:
    """The run's messages on the wire: requests in the default form, responses in
    `fmt` (the default form when nothing of one is native)."""
    out: list[Turn] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                out.extend(chat(_request_parts(part)))
            continue
        model = message.model_name
        if fmt == "anthropic" and (turn := native.anthropic_turn(message, provider)):
            out.append(Turn("anthropic", turn, model))
        elif fmt == "responses" and (items := native.responses_items(message, provider)):
            out.extend(Turn("responses", item, model) for item in items)
        elif fmt == "gemini" and (content := gemini.gemini_content(message, provider)):
            out.append(Turn("gemini", content, model))
        else:
            out.append(Turn("openai", _response(message)))
    return out


def from_context(context: Context, fmt: Wire, provider: str) -> list[ModelMessage]:
    if fmt == "anthropic":
        return native.from_anthropic(context, provider)
    if fmt == "responses":
        return native.from_responses(context, provider)
    if fmt == "gemini":
        return gemini.from_gemini(context, provider)
    return from_openai(context.messages or [])


def history_processor(
    client: Client | AsyncClient,
    *,
    conversation_id: str,
    format: Wire | None = None,
    **context_params: Any,
) -> Processor:
    """The processor for `ProcessHistory(…)` / `history_processors=[…]`.
    `format`: the wire format of the model's turns and of the context read (default: by
    the run's model, module docstring). `context_params` go to `client.context.get`
    (model, strategy, options, …)."""
    mirror = HistoryMirror()

    async def process(ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]:
        fmt, system = run_format(ctx.model)
        if format is not None:
            fmt = format
        provider = (
            system
            if fmt == "gemini" and system.startswith("google")
            else PROVIDERS.get(fmt, system)
        )
        incoming = to_turns(messages, fmt, provider)
        if isinstance(client, AsyncClient):
            context = await async_sync_and_read(
                client, mirror, conversation_id, incoming, context_params=context_params, fmt=fmt
            )
        else:
            context = await asyncio.to_thread(
                sync_and_read,
                client,
                mirror,
                conversation_id,
                incoming,
                context_params=context_params,
                fmt=fmt,
            )
        out = from_context(context, fmt, provider)
        mirror.context_sent(to_turns(out, fmt, provider))
        return out

    return process


def _as_tools(
    definitions: list[builtin.Definition],
    names: Sequence[str] | None,
    make: Callable[[str], Callable[..., Any]],
) -> list[Tool[Any]]:
    return [
        Tool.from_schema(make(f["name"]), f["name"], f.get("description"), f["parameters"])
        for f in builtin.functions(definitions)
        if names is None or f["name"] in names
    ]


def builtin_tools(
    client: Client, *, conversation_id: str, names: Sequence[str] | None = None
) -> list[Tool[Any]]:
    """contextq's built-in tools (all, or those named) as PydanticAI tools on this
    conversation; an API refusal reaches the model as the tool's text."""

    def make(name: str) -> Callable[..., str]:
        def call(**arguments: Any) -> str:
            return builtin.run(client, conversation_id, name, arguments)

        return call

    return _as_tools(client.tools.list(format="openai").data, names, make)


async def async_builtin_tools(
    client: AsyncClient, *, conversation_id: str, names: Sequence[str] | None = None
) -> list[Tool[Any]]:
    """As `builtin_tools`, over an `AsyncClient` (the tools are coroutines)."""

    def make(name: str) -> Callable[..., Awaitable[str]]:
        async def call(**arguments: Any) -> str:
            return await builtin.async_run(client, conversation_id, name, arguments)

        return call

    definitions = (await client.tools.list(format="openai")).data
    return _as_tools(definitions, names, make)
