"""Gemini `Content`s (google-genai, REST camelCase or the SDK's snake_case dump):
validate, normalise, classify.

Contents become rows (design 26 §2), each row's payload a Content-shaped dict:
- a `model` content → ONE assistant row, payload the whole content; its text is the
  non-thought `text` parts joined, its tool calls the `functionCall` parts. A call
  without an id gets a stable one, `gemini-<name>-<n>` (n counting that name's calls in
  the conversation: `CallBook.synthetic_id`), in the normalised row only: the payload is
  never changed;
- a `user` content (also one without a role: the API's default) → rows in part order:
  each `functionResponse` part → one `tool` row (payload `{…, "parts": [part]}`), each
  run of other parts → one `user` row. A response without an id answers the oldest
  open call of its name.

Refused (named by place `contents[i]…`): a content that is not an object; a role other
than user and model (no `assistant`, no `system`: the system prompt is the
conversation's); `parts` missing, empty or not a list; a part that is not an object;
a `functionCall` without a name or in a user content; a `functionResponse` in a model
content, or answering no open call. Unknown part fields are kept as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from contextq.history.native.common import (
    CallBook,
    check_call_count,
    data_url,
    image_part,
    joined_text,
    kind_name,
    native_message,
    non_empty_text,
    normal_content,
    openai_call,
    refuse,
    text_part,
    with_first_text,
)
from contextq.history.types import Content, Message

ID_PREFIX = "gemini"
# each field a part may hold, by its REST (camelCase) and SDK (snake_case) spellings
_SPELLINGS = {
    "functionCall": "function_call",
    "functionResponse": "function_response",
    "inlineData": "inline_data",
    "fileData": "file_data",
    "thoughtSignature": "thought_signature",
    "executableCode": "executable_code",
    "codeExecutionResult": "code_execution_result",
    "videoMetadata": "video_metadata",
    "toolCall": "tool_call",
    "toolResponse": "tool_response",
    "partMetadata": "part_metadata",
    "mediaResolution": "media_resolution",
}
# fields the engine reads, or that qualify what it reads; any other is opaque
_READ = ("text", "thought", "thoughtSignature", "functionCall", "functionResponse", "inlineData")
_READ_TOO = ("fileData", "videoMetadata", "mediaResolution")
READ_PART_FIELDS = frozenset(
    k for camel in (*_READ, *_READ_TOO) for k in (camel, _SPELLINGS.get(camel, camel))
)


def field(part: Mapping[str, Any], camel: str) -> tuple[str, Any]:
    """(the key as posted, its value) of a part field in either spelling; a null value
    counts as absent (the SDK's dump without exclude_none)."""
    for key in (camel, _SPELLINGS.get(camel, camel)):
        value = part.get(key)
        if value is not None:
            return key, value
    return camel, None


def parse_contents(contents: list[Any], book: CallBook, model: str | None) -> list[Message]:
    rows: list[Message] = []
    for i, content in enumerate(contents):
        place = f"contents[{i}]"
        if not isinstance(content, Mapping):
            raise refuse(
                place, f"a content is an object with role and parts, not {kind_name(content)}"
            )
        role = content.get("role")
        if role is not None and role not in ("user", "model"):
            raise refuse(
                f"{place}.role",
                f"Gemini contents have the roles user and model, not {role!r}: the model's "
                'turns are role "model" (a system prompt is the conversation\'s, not a content)',
            )
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise refuse(f"{place}.parts", "a content needs its parts (a non-empty list)")
        for j, part in enumerate(parts):
            if not isinstance(part, Mapping):
                raise refuse(f"{place}.parts[{j}]", f"a part is an object, not {kind_name(part)}")
        if role == "model":
            rows.append(_model(content, parts, place, book, model))
        else:
            rows.extend(_user(content, parts, place, book, model))
    return rows


def _model(
    content: Mapping[str, Any], parts: list[Any], place: str, book: CallBook, model: str | None
) -> Message:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        where = f"{place}.parts[{j}]"
        key, response = field(part, "functionResponse")
        if response is not None:
            raise refuse(
                f"{where}.{key}",
                "functionResponse parts answer the model: they go in a user content",
            )
        key, call = field(part, "functionCall")
        if call is not None:
            calls.append(_call(call, f"{where}.{key}", book))
            check_call_count(calls, where)
        elif isinstance(part.get("text"), str) and part.get("thought") is not True:
            texts.append(part["text"])
    return native_message(
        "gemini", model, dict(content), "assistant", joined_text(texts), tool_calls=calls
    )


def _call(call: Any, where: str, book: CallBook) -> dict[str, Any]:
    if not isinstance(call, Mapping) or not non_empty_text(call.get("name")):
        raise refuse(f"{where}.name", "a functionCall needs the name of the function it calls")
    name = call["name"]
    call_id = call.get("id")
    if not non_empty_text(call_id):
        call_id = book.synthetic_id(ID_PREFIX, name)
    book.make(call_id, name, where=f"{where}.id")
    arguments = call.get("args")
    return openai_call(call_id, name, arguments if arguments is not None else {})


def _user(
    content: Mapping[str, Any], parts: list[Any], place: str, book: CallBook, model: str | None
) -> list[Message]:
    rows: list[Message] = []
    run: list[Any] = []

    def flush() -> None:
        if run:
            slice_ = {**content, "parts": list(run)}
            rows.append(native_message("gemini", model, slice_, "user", _user_content(run)))
            run.clear()

    for j, part in enumerate(parts):
        where = f"{place}.parts[{j}]"
        key, call = field(part, "functionCall")
        if call is not None:
            raise refuse(
                f"{where}.{key}", "functionCall parts are the model's: they go in a model content"
            )
        key, response = field(part, "functionResponse")
        if response is None:
            run.append(part)
            continue
        flush()
        call_id = _answered(response, f"{where}.{key}", book)
        slice_ = {**content, "parts": [part]}
        result = response.get("response")
        text = json.dumps(
            result if result is not None else {}, ensure_ascii=False, separators=(",", ":")
        )
        rows.append(native_message("gemini", model, slice_, "tool", text, tool_call_id=call_id))
    flush()
    return rows


def _answered(response: Any, where: str, book: CallBook) -> str:
    """The id of the call a functionResponse answers (closing it)."""
    if not isinstance(response, Mapping):
        raise refuse(where, f"a functionResponse is an object, not {kind_name(response)}")
    call_id, name = response.get("id"), response.get("name")
    if non_empty_text(call_id):
        if book.answer(call_id, where=f"{where}.id"):
            return str(call_id)
        raise refuse(
            f"{where}.id",
            f"this functionResponse answers no call: {call_id!r} is not the id of a "
            "functionCall earlier in the batch nor of a call still open in this conversation",
        )
    if not non_empty_text(name):
        raise refuse(
            f"{where}.name", "a functionResponse needs the name of the function it answers"
        )
    found = book.answer_by_name(name)
    if found is None:
        raise refuse(
            f"{where}.name",
            f"this functionResponse answers no call: no functionCall of {name!r} earlier in "
            "the batch or still open in this conversation is unanswered",
        )
    return found


def _user_content(parts: list[Any]) -> Content:
    out: list[dict[str, Any]] = []
    for part in parts:
        _, inline = field(part, "inlineData")
        if isinstance(part.get("text"), str) and part.get("thought") is not True:
            out.append(text_part(part["text"]))
        elif isinstance(inline, Mapping):
            media = inline.get("mimeType") or inline.get("mime_type")
            if (
                isinstance(media, str)
                and media.startswith("image/")
                and non_empty_text(inline.get("data"))
            ):
                out.append(image_part(data_url(media, inline["data"])))
    return normal_content(out)


# ---------------------------------------------------------------- classification


def is_thought(part: Any) -> bool:
    """A thought part (`thought: true`): the model's reasoning text."""
    return isinstance(part, dict) and part.get("thought") is True


def has_signature(part: Any) -> bool:
    """Whether a part carries a thought signature (reasoning state riding on it)."""
    return isinstance(part, dict) and field(part, "thoughtSignature")[1] is not None


def is_reasoning(part: Any) -> bool:
    """A thought part, or a part carrying a thought signature."""
    return is_thought(part) or has_signature(part)


def is_opaque(part: Any) -> bool:
    """A part with fields the engine does not read (server-side tool calls, code
    execution, unknown fields): kept, sent back to Gemini alone."""
    return isinstance(part, Mapping) and any(
        k not in READ_PART_FIELDS and v is not None for k, v in part.items()
    )


def parts_of(payload: Any) -> list[Any]:
    parts = payload.get("parts") if isinstance(payload, dict) else None
    return parts if isinstance(parts, list) else []


def reasoning_units(payload: Any) -> int:
    """Reasoning parts of a content: thought parts and parts carrying a signature."""
    return sum(1 for part in parts_of(payload) if is_reasoning(part))


# ---------------------------------------------------------------- sent back

# Google's documented dummy signature (thought-signatures FAQ): `skip_thought_signature_
# validator`, in the JSON as every thoughtSignature is, base64 (google-genai decodes it
# to the dummy's bytes)
DUMMY_SIGNATURE = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="
_SIGNATURE_KEYS = ("thoughtSignature", "thought_signature")


def signature_of(part: Any) -> Any:
    """A part's thought signature (either spelling), None when it has none."""
    return field(part, "thoughtSignature")[1] if isinstance(part, dict) else None


def unsigned(part: Any) -> Any:
    """A part without its thought signature."""
    if not has_signature(part):
        return part
    return {k: v for k, v in part.items() if k not in _SIGNATURE_KEYS}


def sent_parts(payload: Any, reasoning: bool) -> list[Any]:
    """A row's parts as sent back to Gemini: as stored, in order, unknown fields
    included (`reasoning` False: without its thought parts and thought signatures)."""
    parts = parts_of(payload)
    if reasoning:
        return list(parts)
    return [unsigned(p) for p in parts if not is_thought(p)]


def with_dummy_signature(parts: list[Any]) -> list[Any]:
    """`parts` (a model step) with the documented dummy signature on its first
    `functionCall` part when that part has no signature of its own
    (docs/context.md#reasoning-state)."""
    for i, part in enumerate(parts):
        key, call = field(part, "functionCall") if isinstance(part, dict) else ("", None)
        if call is None:
            continue
        if has_signature(part):
            return parts
        spelled = "thought_signature" if key == "function_call" else "thoughtSignature"
        sig_key = next((k for k in _SIGNATURE_KEYS if k in part), spelled)
        return [*parts[:i], {**part, sig_key: DUMMY_SIGNATURE}, *parts[i + 1 :]]
    return parts


def is_response(part: Any) -> bool:
    """A functionResponse part (either spelling)."""
    return isinstance(part, dict) and field(part, "functionResponse")[1] is not None


def with_text(payload: Any, role: str, text: str) -> Any:
    """The content of a row shown shorter (a tool result's stub or preview, a message's
    preview): a functionResponse's response the text (under `error` when it was an
    error, else `output`; its name, id and other keys kept), a user content's parts the
    text, a model content's first text part the text (its other text parts out;
    thoughts, calls and signatures as they are)."""
    parts = parts_of(payload)
    if not isinstance(payload, Mapping) or not parts:
        return payload
    if role == "tool":
        key, response = field(parts[0], "functionResponse")
        if not isinstance(response, Mapping):
            return payload
        was = response.get("response")
        slot = "error" if isinstance(was, Mapping) and "error" in was else "output"
        shown = {**parts[0], key: {**response, "response": {slot: text}}}
        return {**payload, "parts": [shown]}
    if role != "assistant":
        return {**payload, "parts": [{"text": text}]}
    shown_parts = with_first_text(
        parts,
        text,
        is_text=lambda p: isinstance(p.get("text"), str) and not is_thought(p),
        set_text=lambda p, t: {**p, "text": t},
        new=lambda t: {"text": t},
        skip=is_thought,
    )
    return {**payload, "parts": shown_parts}
