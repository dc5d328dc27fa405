"""The default (OpenAI Chat) form of `POST …/messages`, with Anthropic turns read out of
it: a message whose content holds blocks only the Messages API has (`tool_use`,
`tool_result`, `thinking`, `redacted_thinking`, server-tool blocks, …) is parsed as an
Anthropic turn (docs/api.md#native-turns), never stored as opaque text.

Such a message keeps its own fields on every row it becomes (`pinned`, `name`, `kind`
unless a result is an error; `file_ids` on its first row that is not a tool result).
An assistant message of that kind may also carry OpenAI `tool_calls` (an SDK that
turned the `tool_use` blocks into calls): they join its content as `tool_use` blocks,
after the posted blocks, so that its payload is the turn Anthropic returned.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextq.history.native import anthropic
from contextq.history.native.anthropic import at
from contextq.history.native.common import CallBook, refuse
from contextq.history.types import Message, shape_problem


def holds_native_blocks(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any default-form message is read as an Anthropic turn."""
    return any(anthropic.holds_anthropic_blocks(m.get("content")) for m in messages)


def parse_default(
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str | None,
    book: CallBook,
    single: bool = False,
) -> list[Message]:
    """Engine messages of default-form dicts (the OpenAI shape plus `pinned`, `kind`,
    `file_ids`); places are `messages[i].<field>`, or `<field>` for a single message."""
    out: list[Message] = []
    for i, data in enumerate(messages):
        where = "" if single else f"messages[{i}]"
        if anthropic.holds_anthropic_blocks(data.get("content")):
            out.extend(_anthropic_turn(data, where, book, model))
        else:
            out.append(_chat_message(data, where, book))
    return out


def _chat_message(data: Mapping[str, Any], where: str, book: CallBook) -> Message:
    message = Message.from_openai(
        data,
        pinned=bool(data.get("pinned")),
        kind=data.get("kind"),
        file_ids=list(data.get("file_ids") or []),
    )
    problem = shape_problem(message)
    if problem is not None:
        field, reason = problem
        raise refuse(at(where, field), reason)
    for call in message.tool_calls or ():
        function = call.get("function") or {}
        call_id = str(call.get("id", ""))
        book.make(call_id, str(function.get("name", "")), where=at(where, "tool_calls"))
    if message.role == "tool":
        book.close_default(message.tool_call_id)
    return message


def _anthropic_turn(
    data: Mapping[str, Any], where: str, book: CallBook, model: str | None
) -> list[Message]:
    role = data.get("role")
    if role == "tool":
        raise refuse(
            at(where, "content"),
            "a tool message's content is text (or text parts); Anthropic blocks such as "
            "tool_result go in a user message",
        )
    if data.get("tool_call_id") is not None:
        raise refuse(at(where, "tool_call_id"), "only tool messages carry a tool_call_id")
    calls = data.get("tool_calls") or []
    if calls and role != "assistant":
        raise refuse(at(where, "tool_calls"), "only assistant messages carry tool_calls")
    content = [*data["content"], *(_tool_use(call) for call in calls)]
    rows = anthropic.parse_turn({"role": role, "content": content}, where, book, model)
    kind, name = data.get("kind"), data.get("name")
    for row in rows:
        row.pinned = bool(data.get("pinned"))
        row.name = name
        if row.kind is None:
            row.kind = kind
    files = list(data.get("file_ids") or [])
    if files:
        target = next((r for r in rows if r.role != "tool"), rows[-1])
        target.file_ids = files
    return rows


def _tool_use(call: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI tool call as the `tool_use` block it was (same id, input an object)."""
    function = call.get("function") or {}
    arguments = function.get("arguments", "{}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = {"raw_arguments": arguments}
    if not isinstance(arguments, dict):
        arguments = {"value": arguments}
    return {
        "type": "tool_use",
        "id": call.get("id"),
        "name": function.get("name"),
        "input": arguments,
    }
