"""The message type the history engine works on: plain data, no I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast, get_args

from contextq.errors import ValidationFailed

Role = Literal["system", "user", "assistant", "tool"]
NativeFormat = Literal["anthropic", "responses", "gemini"]
Kind = Literal["user_prompt", "reasoning", "tool_call", "decision", "error", "observation"]
ROLES: frozenset[str] = frozenset(get_args(Role))
KINDS: frozenset[str] = frozenset(get_args(Kind))
NATIVE_FORMATS: frozenset[str] = frozenset(get_args(NativeFormat))
# the wire formats a context is given in (docs/api.md#native-turns `format=`); each has its module
# in `contextq.assembly.formats`, registered in its `FORMATS` table under this name
FormatName = Literal["openai", "anthropic", "responses", "gemini"]
FORMAT_NAMES: tuple[FormatName, ...] = get_args(FormatName)

Content = str | list[dict[str, Any]] | None

MAX_TOOL_CALLS = 128  # per assistant message: the longest tool chain is 1 + this


@dataclass(frozen=True, slots=True)
class Native:
    """A message's slice of a vendor's own turn, verbatim (docs/api.md#native-turns).

    `payload` is the JSON value exactly as posted (key order, empty strings, nulls and
    unknown keys kept): an Anthropic MessageParam, a list of Responses items, or a
    Gemini Content (`contextq.history.native` says which slice each row holds).
    """

    format: NativeFormat
    model: str | None  # the model that produced the turn (body "model", else the conversation's)
    payload: Any


@dataclass(slots=True)
class Message:
    """One message of a conversation, as stored, plus the fields the engine needs.

    `token_count` is the message's cost as sent (see `history.message_tokens`); the service
    computes it once at insert. Strategies use it as is and count only when it is None.
    """

    role: Role
    content: Content = None
    id: str | None = None
    seq: int = 0
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    pinned: bool = False
    kind: Kind | None = None
    importance: float | None = None
    token_count: int | None = None
    file_ids: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    native: Native | None = None  # the vendor's own turn this message came from, if any

    @property
    def call_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this (assistant) message makes."""
        if not self.tool_calls:
            return ()
        return tuple(str(call.get("id", "")) for call in self.tool_calls)

    def text(self) -> str:
        """The message's text: a string content, or its text parts joined by newlines."""
        return content_text(self.content)

    def to_openai(self) -> dict[str, Any]:
        """The dict exactly as the OpenAI chat completions API takes it (no None values)."""
        out: dict[str, Any] = {"role": self.role}
        content = self.content
        if self.role == "assistant" and self.tool_calls:
            if content not in (None, "", []):
                out["content"] = content
            out["tool_calls"] = [_openai_call(call) for call in self.tool_calls]
        else:
            out["content"] = "" if content is None else content
        if self.role == "tool" and self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name and self.role in ("user", "system", "assistant"):
            out["name"] = self.name
        return out

    @classmethod
    def from_openai(cls, data: Mapping[str, Any], **fields: Any) -> Message:
        """Build from an OpenAI-style dict; `fields` sets the engine's extra fields."""
        role = str(data.get("role", ""))
        if role not in ROLES:
            raise ValueError(f"role must be one of {sorted(ROLES)}, not {role!r}")
        return cls(
            role=cast(Role, role),
            content=data.get("content"),
            tool_calls=data.get("tool_calls") or None,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            **fields,
        )


def shape_problem(message: Message) -> tuple[str, str] | None:
    """(field, reason) when `message` breaks the chat format's pairing rules, else None:
    a tool result answers a call id; only assistant messages make calls."""
    if message.role == "tool" and not message.tool_call_id:
        return "tool_call_id", "a tool message needs the tool_call_id it answers"
    if message.tool_calls and message.role != "assistant":
        return "tool_calls", "only assistant messages carry tool_calls"
    if message.tool_call_id and message.role != "tool":
        return "tool_call_id", "only tool messages carry a tool_call_id"
    return None


def _openai_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return {
        "id": str(call.get("id", "")),
        "type": "function",
        "function": {"name": str(function.get("name", "")), "arguments": arguments},
    }


def content_text(content: Content) -> str:
    """Text of a content value: the string itself, or the text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") in ("image_url", "image"):
            texts.append("[image]")
        elif part.get("type") in ("input_audio", "audio"):
            texts.append("[audio]")
        elif part.get("type") == "file":
            texts.append("[file]")
    return "\n".join(texts)


def check_format(name: str) -> FormatName:
    """`name` as a format name; ValidationFailed naming `format` for any other."""
    if name not in FORMAT_NAMES:
        choices = ", ".join(FORMAT_NAMES[:-1]) + " or " + FORMAT_NAMES[-1]
        raise ValidationFailed(f"format must be {choices}", field="format")
    return name
