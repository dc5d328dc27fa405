"""What the three vendor parsers share: the book of open tool calls, the refusal that
names its place, and the normalised pieces (OpenAI content parts, tool calls)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeGuard

from contextq.errors import ValidationFailed
from contextq.history.types import MAX_TOOL_CALLS, Content, Message, Native, NativeFormat, Role

MAX_CALL_ID_CHARS = 200  # a call id is stored as a row's tool_call_id (200 characters)


def refuse(where: str, reason: str) -> ValidationFailed:
    """The 422 of a native batch: `where` is the place (`messages[3].content[1]`)."""
    return ValidationFailed(reason, field=where)


class CallBook:
    """The tool calls a batch may still answer, oldest first: the open calls of the
    stored conversation's current turn, then each call the batch makes. A result closes
    its call, so a second result for the same call answers no call.

    `stored_ids` gives the call ids the conversation already holds (its results'
    `tool_call_id`s), asked for only when a synthetic id is first needed: a synthetic id
    is numbered past them, so two batches never make the same one."""

    def __init__(
        self,
        open_calls: Mapping[str, str] | Iterable[str] = (),
        stored_ids: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        pairs = (
            open_calls.items() if isinstance(open_calls, Mapping) else ((i, "") for i in open_calls)
        )
        self._open: dict[str, str] = {str(k): str(v) for k, v in pairs}  # id -> name
        self._made: dict[str, int] = {}  # name -> the highest n of its synthetic ids
        self._stored_ids = stored_ids
        self._stored: list[str] | None = None

    def make(self, call_id: str, name: str, *, where: str) -> None:
        self._open[fit_id(call_id, where)] = name

    def answer(self, call_id: str, *, where: str) -> bool:
        """Close `call_id`; False when it is not an open call."""
        return self._open.pop(fit_id(call_id, where), None) is not None

    def answer_by_name(self, name: str) -> str | None:
        """Close the oldest open call of `name` and return its id (Gemini results need
        not carry an id)."""
        for call_id, called in self._open.items():
            if called == name:
                del self._open[call_id]
                return call_id
        return None

    def synthetic_id(self, prefix: str, name: str) -> str:
        """A stable id for a call that came without one: `<prefix>-<name>-<n>`, n counting
        that name's calls in the conversation: past every such id it holds or has open,
        and this batch's."""
        stem = f"{prefix}-{name[:150]}-"
        n = self._made.get(name)
        if n is None:
            n = max((_number(i, stem) for i in (*self._stored_list(), *self._open)), default=0)
        while True:
            n += 1
            call_id = f"{stem}{n}"
            if call_id not in self._open:
                self._made[name] = n
                return call_id

    def _stored_list(self) -> list[str]:
        if self._stored is None:
            self._stored = [str(i) for i in self._stored_ids()] if self._stored_ids else []
        return self._stored

    def close_default(self, call_id: str | None) -> None:
        """A default-form tool message answers its call when it is open (the default form
        is not checked against the calls: it never was)."""
        if call_id is not None:
            self._open.pop(call_id, None)


def _number(call_id: str, stem: str) -> int:
    """n of `<stem><n>`, else 0."""
    tail = call_id[len(stem) :] if call_id.startswith(stem) else ""
    return int(tail) if tail.isdigit() and len(tail) < 10 else 0


def fit_id(call_id: str, where: str) -> str:
    """A call id as the store keeps it: at most MAX_CALL_ID_CHARS, no NUL."""
    if len(call_id) > MAX_CALL_ID_CHARS or "\x00" in call_id:
        raise refuse(
            where, f"a call id has at most {MAX_CALL_ID_CHARS} characters and no NUL character"
        )
    return call_id


def check_call_count(calls: list[dict[str, Any]], where: str) -> None:
    """At most MAX_TOOL_CALLS calls in one assistant turn (as in the default form)."""
    if len(calls) > MAX_TOOL_CALLS:
        raise refuse(where, f"one assistant turn makes at most {MAX_TOOL_CALLS} tool calls")


def openai_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """A tool call in the OpenAI Chat shape (arguments as a JSON string)."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(url: str, detail: str | None = None) -> dict[str, Any]:
    image: dict[str, Any] = {"url": url}
    if detail:
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def data_url(media_type: str, data: str) -> str:
    return f"data:{media_type};base64,{data}"


def normal_content(parts: list[dict[str, Any]]) -> Content:
    """OpenAI content from parts: one text part as its string, "" for none, else the
    parts (several texts stay apart, as the vendor's blocks were)."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def joined_text(texts: list[str], separator: str = "") -> str | None:
    """An assistant's visible text: its text pieces joined (the blocks or parts of one
    turn are pieces of one text, as the SDKs' own `.text` joins them); None when none."""
    return separator.join(texts) if texts else None


def native_message(
    fmt: NativeFormat,
    model: str | None,
    payload: Any,
    role: Role,
    content: Content,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    tool_call_id: str | None = None,
    error: bool = False,
) -> Message:
    """One engine message carrying its slice of the vendor's turn."""
    return Message(
        role=role,
        content=content,
        tool_calls=tool_calls or None,
        tool_call_id=tool_call_id,
        kind="error" if error else None,
        native=Native(fmt, model, payload),
    )


def non_empty_text(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value != ""


def kind_name(value: Any) -> str:
    """A JSON value's kind for messages: `a string`, `an object`, …"""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return "a number"


def with_first_text(
    nodes: list[Any],
    text: str,
    *,
    is_text: Callable[[Any], bool],
    set_text: Callable[[Any, str], Any],
    new: Callable[[str], Any],
    skip: Callable[[Any], bool],
) -> list[Any]:
    """`nodes` (a turn's blocks, items or parts) showing `text` as their visible text:
    the first text node holds it, the other text nodes are left out, every other node
    stays as it is and in its place. With no text node, a new one goes before the first
    node that `skip` does not pass over (leading reasoning stays first)."""
    out: list[Any] = []
    done = False
    for node in nodes:
        if not is_text(node):
            out.append(node)
        elif not done:
            out.append(set_text(node, text))
            done = True
    if not done:
        at = next((i for i, node in enumerate(out) if not skip(node)), len(out))
        out.insert(at, new(text))
    return out
