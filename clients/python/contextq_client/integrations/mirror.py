"""What an agent framework's message list holds that contextq does not have yet.

A framework hands its whole history to a hook on every model call. The new messages are
appended to the conversation, and the model gets contextq's context instead. Some
frameworks keep the original history (LangGraph's `llm_input_messages`), others replace
it with what the hook returned (PydanticAI): so a message is new unless it was appended
before or came from the last context (counted, so a repeated "yes" is new).

A framework's history becomes `Turn`s on the wire: each is a default-form (OpenAI chat)
message, or a vendor's own turn (docs/api.md#native-turns: an Anthropic MessageParam, a
Responses item, a Gemini Content) with the model that produced it. The model's turns
go natively when the run's vendor is known, so its reasoning (thinking and signatures,
reasoning items, thought signatures) is stored and comes back in that vendor's format.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from contextq_client import AsyncClient, Client
from contextq_client.models import Context

OpenAIMessage = dict[str, Any]
Wire = Literal["openai", "anthropic", "responses", "gemini"]
CHAT_KEYS = ("role", "content", "tool_calls", "tool_call_id")


@dataclass(frozen=True)
class Turn:
    """One message on the wire: `data` is a default-form message (`wire="openai"`) or a
    native turn of `wire`'s format; `model` the model that produced it, if any."""

    wire: Wire
    data: dict[str, Any]
    model: str | None = None


def chat(messages: Iterable[OpenAIMessage]) -> list[Turn]:
    return [Turn("openai", message) for message in messages]


def fingerprint(turn: Turn) -> str:
    if turn.wire == "openai":
        fields = {k: turn.data.get(k) for k in CHAT_KEYS}
        return json.dumps(fields, sort_keys=True, default=str)
    return turn.wire + json.dumps(turn.data, sort_keys=True, default=str)


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

    def new(self, turns: Iterable[Turn]) -> list[Turn]:
        known = self.appended | self.last_context  # the larger count of each
        fresh = []
        for turn in turns:
            key = fingerprint(turn)
            if known[key] > 0:
                known[key] -= 1
            else:
                fresh.append(turn)
        return fresh

    def appended_now(self, turns: Iterable[Turn]) -> None:
        self.appended.update(fingerprint(t) for t in turns)

    def context_sent(self, turns: Iterable[Turn]) -> None:
        self.last_context = Counter(fingerprint(t) for t in turns)


def batches(turns: list[Turn]) -> list[tuple[Wire, str | None, list[dict[str, Any]]]]:
    """Consecutive turns posted together: one batch per run of one wire, split where
    two model turns name different models."""
    out: list[tuple[Wire, str | None, list[dict[str, Any]]]] = []
    for turn in turns:
        if out:
            wire, model, datas = out[-1]
            clash = turn.model is not None and model is not None and turn.model != model
            if wire == turn.wire and not clash:
                out[-1] = (wire, model or turn.model, [*datas, turn.data])
                continue
        out.append((turn.wire, turn.model, [turn.data]))
    return out


def _read_params(fmt: Wire, context_params: dict[str, Any]) -> dict[str, Any]:
    return {**context_params, "format": fmt}


def sync_and_read(
    client: Client,
    mirror: HistoryMirror,
    conversation_id: str,
    turns: list[Turn],
    *,
    context_params: dict[str, Any],
    fmt: Wire = "openai",
) -> Context:
    """Append what is new (default-form and native batches, in order), then the
    context in `fmt`."""
    fresh = mirror.new(turns)
    for wire, model, datas in batches(fresh):
        if wire == "openai":
            client.messages.append(conversation_id, [storable(d) for d in datas])
        else:
            client.messages.record(conversation_id, datas, format=wire, model=model)
    mirror.appended_now(fresh)
    return client.context.get(conversation_id, **_read_params(fmt, context_params))


async def async_sync_and_read(
    client: AsyncClient,
    mirror: HistoryMirror,
    conversation_id: str,
    turns: list[Turn],
    *,
    context_params: dict[str, Any],
    fmt: Wire = "openai",
) -> Context:
    """As `sync_and_read`, with an `AsyncClient`."""
    fresh = mirror.new(turns)
    for wire, model, datas in batches(fresh):
        if wire == "openai":
            await client.messages.append(conversation_id, [storable(d) for d in datas])
        else:
            await client.messages.record(conversation_id, datas, format=wire, model=model)
    mirror.appended_now(fresh)
    return await client.context.get(conversation_id, **_read_params(fmt, context_params))
