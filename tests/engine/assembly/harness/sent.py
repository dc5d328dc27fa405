"""What an answer holds, read as a client reads it: each message's text by the marker
every generated message starts with, tool calls and results by call id, documents,
attachment labels and system texts, in every format.

A call is known by its id and its arguments (Gemini calls posted without ids get ids
that repeat from batch to batch, so an id alone may name two calls); a Gemini part in
either spelling (REST camelCase or the SDK's snake_case); a Gemini call or response
sent without an id (a native row, verbatim) gets the id its row was stored with, found
from the stored history, and a response without one answers the oldest unanswered call
of its name before it, as the API pairs them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from contextq.history import Message
from tests.engine.assembly.harness.text import MARKER

GEMINI_SNAKE = {
    "functionCall": "function_call",
    "functionResponse": "function_response",
    "thoughtSignature": "thought_signature",
    "inlineData": "inline_data",
}


def gemini_field(part: dict[str, Any], camel: str) -> Any:
    """A Gemini part's field in either spelling (None when absent)."""
    value = part.get(camel)
    if value is None:
        value = part.get(GEMINI_SNAKE.get(camel, camel))
    return value


def arguments_of(value: Any) -> Any:
    """A call's arguments as a JSON value (Chat and Responses send a JSON string)."""
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except ValueError:
            return value
    return value


@dataclass(slots=True)
class Sent:
    """An answer's content, found by marker, call id and file name."""

    texts: dict[int, list[str]] = field(default_factory=dict)  # seq → text(s) sent for it
    calls: dict[str, str] = field(default_factory=dict)  # call id → tool name
    call_args: dict[str, list[Any]] = field(default_factory=dict)  # call id → arguments sent
    results: dict[str, list[str]] = field(default_factory=dict)  # call id → result texts
    documents: list[dict[str, Any]] = field(default_factory=list)  # documents JSON entries
    document_texts: list[str] = field(default_factory=list)  # each documents JSON as sent
    labels: list[tuple[str, str]] = field(default_factory=list)  # (label text, next part type)
    system: list[str] = field(default_factory=list)  # system texts, in order

    def text(self, seq: int) -> str | None:
        found = self.texts.get(seq)
        return found[0] if found else None

    def call(self, call_id: str, name: str, arguments: Any) -> None:
        self.calls[call_id] = name
        self.call_args.setdefault(call_id, []).append(arguments_of(arguments))

    def called(self, call: dict[str, Any]) -> bool:
        """Whether the stored call (OpenAI shape) is sent: its id with its arguments."""
        sent = self.call_args.get(str(call.get("id")))
        return sent is not None and arguments_of(call["function"]["arguments"]) in sent

    def result(self, m: Message) -> str | None:
        """The text sent for tool result `m` (recorded sessions and Gemini calls without
        ids reuse call ids: then the one that holds its marker, or the stub or preview
        naming its id, not another's)."""
        found = self.results.get(str(m.tool_call_id)) or []
        mine = [t for t in found if marker_of(t) == m.seq]
        if not mine:
            unmarked = [t for t in found if marker_of(t) is None]
            named = [t for t in unmarked if f"/{m.id}." in t]
            anonymous = [t for t in unmarked if not NAMED_RESULT.search(t)]
            mine = named or (anonymous if len(found) == 1 else [])
        return mine[0] if mine else None


# a stub or a preview names the message whose whole result is in the workspace
NAMED_RESULT = re.compile(r"/workspace/tool-results/[A-Za-z0-9_-]+\.")
# a preview's note names the message (contextq.assembly.shrink): its head may have lost
# the marker, or have no body at all
NAMED_PREVIEW = re.compile(r"in this conversation's history as message m(\d+)\b")


def marker_of(text: str) -> int | None:
    """The seq a text is marked with: at its start, or (a Gemini result's response
    JSON, `{"output":"[#m12] …`) a few characters in."""
    found = MARKER.match(text) or MARKER.search(text[:24])
    return int(found.group(1)) if found else None


def _is_text(part: dict[str, Any]) -> bool:
    if "type" not in part:  # a Gemini part: one key says what it is
        return "text" in part and part.get("thought") is not True
    return part.get("type") in ("text", "input_text", "output_text")


def _kind(part: dict[str, Any]) -> str:
    return str(part.get("type") or next(iter(part), ""))


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or () if _is_text(p))


def _add_text(sent: Sent, text: str) -> None:
    match = MARKER.match(text) or NAMED_PREVIEW.search(text)
    if match:
        sent.texts.setdefault(int(match.group(1)), []).append(text)
    start = text.find('{"documents": [')
    if start >= 0 and (start == 0 or text[start - 2 : start] == "\n\n"):
        with contextlib.suppress(ValueError, KeyError, TypeError):
            sent.documents += json.loads(text[start:])["documents"]
            sent.document_texts.append(text[start:])


def _parts(sent: Sent, parts: list[dict[str, Any]]) -> None:
    for j, part in enumerate(parts):
        if _is_text(part):
            text = str(part.get("text", ""))
            _add_text(sent, text)
            if text.startswith("Attached "):
                after = _kind(parts[j + 1]) if j + 1 < len(parts) else ""
                sent.labels.append((text, after))
            elif text.startswith("[Attached "):
                sent.labels.append((text, "line"))


def _read_responses(answer: dict[str, Any]) -> Sent:
    sent = Sent()
    if answer["instructions"] is not None:
        sent.system.append(answer["instructions"])
        _add_text(sent, answer["instructions"])
    for item in answer["input"]:
        kind = item.get("type")
        if kind == "function_call":
            sent.call(item["call_id"], item["name"], item.get("arguments"))
        elif kind == "function_call_output":
            text = text_of(item["output"])
            sent.results.setdefault(item["call_id"], []).append(text)
            _add_text(sent, text)
        elif kind in (None, "message"):
            content = item.get("content")
            if item.get("role") == "system":
                sent.system.append(text_of(content))
            if isinstance(content, str):
                _add_text(sent, content)
            elif isinstance(content, list):
                _parts(sent, content)
    return sent


def _key(value: dict[str, Any], *keys: str) -> str:
    return json.dumps([value.get(k) for k in keys], sort_keys=True, ensure_ascii=False)


class GeminiIds:
    """The ids stored for the Gemini calls a native row posted without one (by the
    call's name and arguments), taken in order as the answer names them."""

    def __init__(self, history: Iterable[Message]) -> None:
        self.calls: dict[str, list[str]] = {}
        for m in history:
            if m.native is None or m.native.format != "gemini" or not m.tool_calls:
                continue
            payload = m.native.payload
            parts = payload.get("parts") if isinstance(payload, dict) else None
            made = [gemini_field(p, "functionCall") for p in parts or ()]
            made = [c for c in made if isinstance(c, dict)]
            for call, stored in zip(made, m.tool_calls, strict=False):
                if not call.get("id"):
                    self.calls.setdefault(_key(call, "name", "args"), []).append(stored["id"])
        self.taken: dict[str, int] = {}

    def call_id(self, call: dict[str, Any]) -> str:
        if call.get("id"):
            return str(call["id"])
        key = _key(call, "name", "args")
        ids = self.calls.get(key) or [f"unstored-{call.get('name')}"]
        n = self.taken.get(key, 0)
        self.taken[key] = n + 1
        return ids[min(n, len(ids) - 1)]


def gemini_pairs(contents: list[dict[str, Any]], ids: GeminiIds) -> list[list[str | None]]:
    """Per content, the call id of each part (None for a part neither a call nor a
    response): a response without an id answers the oldest unanswered call of its
    name in the model content before it."""
    out: list[list[str | None]] = []
    open_: list[tuple[str, str]] = []  # (name, id) of the last model content's calls
    for content in contents:
        row: list[str | None] = []
        if content.get("role") == "model":
            open_ = []
        for part in content.get("parts") or ():
            call = gemini_field(part, "functionCall")
            response = gemini_field(part, "functionResponse")
            if isinstance(call, dict):
                call_id = ids.call_id(call)
                open_.append((str(call.get("name")), call_id))
                row.append(call_id)
            elif isinstance(response, dict):
                call_id = response.get("id")
                if not call_id:
                    found = next(
                        (i for i, (n, _) in enumerate(open_) if n == response.get("name")), None
                    )
                    call_id = open_.pop(found)[1] if found is not None else "unanswered"
                row.append(str(call_id))
            else:
                row.append(None)
        out.append(row)
    return out


def _read_gemini(answer: dict[str, Any], history: Iterable[Message]) -> Sent:
    sent = Sent()
    system = answer["system_instruction"] or {"parts": []}
    sent.system = [str(p.get("text", "")) for p in system["parts"]]
    for text in sent.system:
        _add_text(sent, text)
    contents = answer["contents"]
    for content, ids in zip(contents, gemini_pairs(contents, GeminiIds(history)), strict=True):
        parts = content["parts"]
        _parts(sent, [p for p, i in zip(parts, ids, strict=True) if i is None])
        for part, call_id in zip(parts, ids, strict=True):
            call = gemini_field(part, "functionCall")
            response = gemini_field(part, "functionResponse")
            if call_id is not None and isinstance(call, dict):
                sent.call(call_id, str(call.get("name")), call.get("args"))
            elif call_id is not None and isinstance(response, dict):
                made = response.get("response") or {}
                text = str(made.get("output", made.get("error", "")))
                sent.results.setdefault(call_id, []).append(text)
                _add_text(sent, text)
    return sent


def _read_anthropic(answer: dict[str, Any]) -> Sent:
    sent = Sent()
    sent.system = [b.get("text", "") for b in answer.get("system") or ()]
    for text in sent.system:
        _add_text(sent, text)
    for m in answer["messages"]:
        blocks = (
            m["content"]
            if isinstance(m["content"], list)
            else [{"type": "text", "text": m["content"]}]
        )
        _parts(sent, [b for b in blocks if b.get("type") != "tool_result"])
        for b in blocks:
            if b.get("type") == "tool_use":
                sent.call(b["id"], b["name"], b.get("input"))
            elif b.get("type") == "tool_result":
                text = text_of(b.get("content", ""))
                sent.results.setdefault(b["tool_use_id"], []).append(text)
                _add_text(sent, text)
    return sent


def read_sent(answer: dict[str, Any], history: Iterable[Message] = ()) -> Sent:
    """What `answer` holds (`history`: the stored messages, for Gemini calls posted
    without ids)."""
    if answer["format"] == "responses":
        return _read_responses(answer)
    if answer["format"] == "gemini":
        return _read_gemini(answer, history)
    if answer["format"] == "anthropic":
        return _read_anthropic(answer)
    sent = Sent()
    for m in answer["messages"]:
        content = m.get("content")
        if m["role"] == "system":
            sent.system.append(text_of(content))
        if m["role"] == "tool":
            text = text_of(content)
            sent.results.setdefault(m["tool_call_id"], []).append(text)
            _add_text(sent, text)
            continue
        for call in m.get("tool_calls") or ():
            sent.call(call["id"], call["function"]["name"], call["function"]["arguments"])
        if isinstance(content, str):
            _add_text(sent, content)
        elif isinstance(content, list):
            _parts(sent, content)
    return sent
