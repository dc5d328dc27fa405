"""What an agent framework's message list holds that contextq does not have yet.

A framework hands its whole history to a hook on every model call. The new messages are
appended to the contextq conversation, and the model gets contextq's context instead.
Some frameworks keep the original history (LangGraph's `llm_input_messages`), others
replace it with what the hook returned (PydanticAI): so a message is new unless it was
appended before or came from the last context (counted, so a repeated "yes" is new).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from contextq_client import AsyncClient, Client
from contextq_client.chat_kwargs import chat_kwargs_from

OpenAIMessage = dict[str, Any]


def fingerprint(message: OpenAIMessage) -> str:
    keys = ("role", "content", "tool_calls", "tool_call_id")
    return json.dumps({k: message.get(k) for k in keys}, sort_keys=True, default=str)


def storable(message: OpenAIMessage) -> OpenAIMessage:
    """The fields contextq stores of an OpenAI-format message."""
    keep = ("role", "content", "tool_calls", "tool_call_id", "name")
    out = {k: message[k] for k in keep if message.get(k) not in (None, [])}
    out.setdefault("content", "")
    return out


class HistoryMirror:
    def __init__(self) -> None:
        self.appended: Counter[str] = Counter()
        self.last_context: Counter[str] = Counter()

    def new(self, messages: Iterable[OpenAIMessage]) -> list[OpenAIMessage]:
        known = self.appended | self.last_context  # the larger count of each
        fresh = []
        for message in messages:
            key = fingerprint(message)
            if known[key] > 0:
                known[key] -= 1
            else:
                fresh.append(message)
        return fresh

    def appended_now(self, messages: Iterable[OpenAIMessage]) -> None:
        self.appended.update(fingerprint(m) for m in messages)

    def context_sent(self, messages: Iterable[OpenAIMessage]) -> None:
        self.last_context = Counter(fingerprint(m) for m in messages)


def sync_and_read(
    client: Client,
    mirror: HistoryMirror,
    conversation_id: str,
    messages: list[OpenAIMessage],
    context_params: dict[str, Any],
) -> list[OpenAIMessage]:
    """Append what is new, then the context's messages (OpenAI format)."""
    fresh = mirror.new(messages)
    if fresh:
        client.messages.append(conversation_id, [storable(m) for m in fresh])
        mirror.appended_now(fresh)
    context = client.context.get(conversation_id, format="openai", **context_params)
    sent: list[OpenAIMessage] = chat_kwargs_from(context, format="openai")["messages"]
    return sent


async def async_sync_and_read(
    client: AsyncClient,
    mirror: HistoryMirror,
    conversation_id: str,
    messages: list[OpenAIMessage],
    context_params: dict[str, Any],
) -> list[OpenAIMessage]:
    """As `sync_and_read`, with an `AsyncClient`."""
    fresh = mirror.new(messages)
    if fresh:
        await client.messages.append(conversation_id, [storable(m) for m in fresh])
        mirror.appended_now(fresh)
    context = await client.context.get(conversation_id, format="openai", **context_params)
    sent: list[OpenAIMessage] = chat_kwargs_from(context, format="openai")["messages"]
    return sent
