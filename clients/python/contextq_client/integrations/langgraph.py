"""LangGraph / LangChain: a `pre_model_hook` that sends the model contextq's context.

    from langgraph.prebuilt import create_react_agent
    from contextq_client.integrations.langgraph import pre_model_hook

    agent = create_react_agent(model, tools, pre_model_hook=pre_model_hook(
        client, conversation_id=conv.id, model="gpt-4o"))

On each model call the graph's new messages are appended to the conversation and the
hook returns `{"llm_input_messages": [...]}`: the ready-to-send context (system prompt,
compaction summary, filtered history, files) as LangChain messages. The graph's own
state is left as it is. Pass a `Client` (a sync hook) or an `AsyncClient` (an async one).

contextq's built-in tools (read what a cleared stub names, list the workspace, search
the project, the memory) as LangChain tools, run on the conversation when the model
calls them: `create_react_agent(model, builtin_tools(client, conversation_id=…), …)`
(`await async_builtin_tools(…)` with an `AsyncClient`).

Reasoning survives the round trip: the model's `AIMessage`s are stored in its vendor's
own format and the context is read in it (`format=`, by default from the newest
`AIMessage`'s `response_metadata["model_provider"]`: `anthropic`, `google_genai` →
`gemini`, `openai` with Responses content → `responses`; else `openai`), so thinking
blocks, standard reasoning blocks with their signature, reasoning items and Gemini
thought signatures come back in the messages the model gets (`langchain_native` has
the mapping). Human, system and tool messages go in the default form.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.tools import StructuredTool

from contextq_client import AsyncClient, Client
from contextq_client.integrations import langchain_native as native
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

Hook = Callable[[dict[str, Any]], dict[str, list[BaseMessage]]]
AsyncHook = Callable[[dict[str, Any]], Awaitable[dict[str, list[BaseMessage]]]]
PROVIDER_FORMATS: dict[str, Wire] = {
    "anthropic": "anthropic",
    "google_genai": "gemini",
    "google_vertexai": "gemini",
}


def _openai(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    converted = convert_to_openai_messages(list(messages))
    return list(converted) if isinstance(converted, list) else [converted]


def _responses_shaped(message: AIMessage) -> bool:
    if str(message.response_metadata.get("id", "")).startswith("resp_"):
        return True
    content = message.content if isinstance(message.content, list) else []
    kinds = {b.get("type") for b in content if isinstance(b, dict)}
    return bool(kinds & {"reasoning", "function_call"})


def history_format(messages: Sequence[BaseMessage]) -> Wire:
    """The wire format of the newest `AIMessage`'s provider (`openai` when unknown)."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            provider = str(message.response_metadata.get("model_provider", ""))
            if provider == "openai" and _responses_shaped(message):
                return "responses"
            return PROVIDER_FORMATS.get(provider, "openai")
    return "openai"


def to_turns(messages: Sequence[BaseMessage], fmt: Wire) -> list[Turn]:
    """The graph's messages on the wire: `AIMessage`s in `fmt` when they have anything
    native, everything else in the default form."""
    out: list[Turn] = []
    for message in messages:
        datas = (
            native.native_turn(message, fmt)
            if isinstance(message, AIMessage) and fmt != "openai"
            else []
        )
        if datas:
            model = message.response_metadata.get("model_name") or message.response_metadata.get(
                "model"
            )
            out.extend(Turn(fmt, data, str(model) if model else None) for data in datas)
        else:
            out.extend(chat(_openai([message])))
    return out


def _lc_messages(context: Context, fmt: Wire) -> list[BaseMessage]:
    """contextq's context as LangChain messages (in OpenAI's format, an assistant message
    that only calls tools has no `content` key, which LangChain's converter requires)."""
    if fmt != "openai":
        return native.from_context(context, fmt)
    sent = context.messages or []
    return convert_to_messages([{**m, "content": m.get("content") or ""} for m in sent])


def _state_messages(state: Any) -> Sequence[BaseMessage]:
    messages = state["messages"] if isinstance(state, dict) else state.messages
    return list(messages)


def pre_model_hook(
    client: Client | AsyncClient,
    *,
    conversation_id: str,
    format: Wire | None = None,
    **context_params: Any,
) -> Hook | AsyncHook:
    """The hook for `create_react_agent(…, pre_model_hook=…)` (or any node before the
    model). `format`: the wire format of the model's turns and of the context read
    (default: by the history's provider, module docstring). `context_params` go to
    `client.context.get` (model, strategy, options, …)."""
    mirror = HistoryMirror()
    if isinstance(client, AsyncClient):
        async_client = client

        async def async_hook(state: dict[str, Any]) -> dict[str, list[BaseMessage]]:
            messages = _state_messages(state)
            fmt = format or history_format(messages)
            context = await async_sync_and_read(
                async_client,
                mirror,
                conversation_id,
                to_turns(messages, fmt),
                context_params=context_params,
                fmt=fmt,
            )
            out = _lc_messages(context, fmt)
            mirror.context_sent(to_turns(out, fmt))
            return {"llm_input_messages": out}

        return async_hook

    def hook(state: dict[str, Any]) -> dict[str, list[BaseMessage]]:
        messages = _state_messages(state)
        fmt = format or history_format(messages)
        context = sync_and_read(
            client,
            mirror,
            conversation_id,
            to_turns(messages, fmt),
            context_params=context_params,
            fmt=fmt,
        )
        out = _lc_messages(context, fmt)
        mirror.context_sent(to_turns(out, fmt))
        return {"llm_input_messages": out}

    return hook


def _as_tools(
    definitions: list[builtin.Definition],
    names: Sequence[str] | None,
    make: Callable[[str], dict[str, Any]],
) -> list[StructuredTool]:
    return [
        StructuredTool.from_function(
            name=f["name"],
            description=f.get("description") or f["name"],
            args_schema=f["parameters"],
            **make(f["name"]),
        )
        for f in builtin.functions(definitions)
        if names is None or f["name"] in names
    ]


def builtin_tools(
    client: Client, *, conversation_id: str, names: Sequence[str] | None = None
) -> list[StructuredTool]:
    """contextq's built-in tools (all, or those named) as LangChain tools on this
    conversation; an API refusal reaches the model as the tool's text."""

    def make(name: str) -> dict[str, Any]:
        def call(**arguments: Any) -> str:
            return builtin.run(client, conversation_id, name, arguments)

        return {"func": call}

    return _as_tools(client.tools.list(format="openai").data, names, make)


async def async_builtin_tools(
    client: AsyncClient, *, conversation_id: str, names: Sequence[str] | None = None
) -> list[StructuredTool]:
    """As `builtin_tools`, over an `AsyncClient` (the tools are coroutines)."""

    def make(name: str) -> dict[str, Any]:
        async def call(**arguments: Any) -> str:
            return await builtin.async_run(client, conversation_id, name, arguments)

        return {"coroutine": call}

    definitions = (await client.tools.list(format="openai")).data
    return _as_tools(definitions, names, make)
