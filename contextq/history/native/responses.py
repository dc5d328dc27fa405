"""OpenAI Responses API items: validate, normalise, classify.

Items become rows (design 26 §2), each row's payload a list of items:
- an input `message` (role user, system or developer; also the easy form
  `{"role", "content"}`) → one row of that role (developer → system), payload `[item]`;
- each maximal run of output items (`reasoning`, assistant `message`, `function_call`,
  `custom_tool_call`, `web_search_call`, `compaction`, any other or unknown type) → ONE
  assistant row, payload the run; its tool calls are the run's `function_call`s and
  `custom_tool_call`s (id = `call_id`; a custom call's arguments are its free-text input);
- each `function_call_output` or `custom_tool_call_output` → one `tool` row, payload
  `[item]`, tool_call_id = its `call_id`.

Refused (what the API refuses, named by place `items[i]…`): an item that is not an
object, or has neither a type nor a role; a message role the API does not have; a
`function_call` without `call_id`, `name` or a string `arguments` (likewise a custom
call's `input`); an output without its `call_id` or `output`, or answering no open call;
a `reasoning` item without its `summary` list, or not followed by an output item (the
API's "provided without its required following item").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from contextq.history.native.common import (
    CallBook,
    check_call_count,
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
from contextq.history.types import Content, Message, Role

Slot = Literal["input", "result", "output"]
INPUT_ROLES: dict[str, Role] = {"user": "user", "system": "system", "developer": "system"}
RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
CALL_TYPES = {"function_call": "arguments", "custom_tool_call": "input"}
REASONING_TYPES = frozenset({"reasoning"})
VISIBLE_TYPES = frozenset({"message", *CALL_TYPES, *RESULT_TYPES})


def parse_items(items: list[Any], book: CallBook, model: str | None) -> list[Message]:
    rows: list[Message] = []
    run: list[Any] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []

    def flush() -> None:
        if run:
            payload = list(run)
            rows.append(
                native_message(
                    "responses",
                    model,
                    payload,
                    "assistant",
                    joined_text(texts, "\n"),  # one text per message item
                    tool_calls=calls[:],
                )
            )
            run.clear()
            texts.clear()
            calls.clear()

    for i, item in enumerate(items):
        place = f"items[{i}]"
        slot = _slot(item, place)
        if slot == "input":
            flush()
            role = INPUT_ROLES[item["role"]]
            rows.append(native_message("responses", model, [item], role, _input_content(item)))
        elif slot == "result":
            flush()
            rows.append(_result(item, place, book, model))
        else:
            _output(items, i, place, book=book, texts=texts, calls=calls)
            run.append(item)
    flush()
    return rows


def _slot(item: Any, place: str) -> Slot:
    """Where an item goes (after checking its role or type)."""
    if not isinstance(item, Mapping):
        raise refuse(place, f"an item is an object with a type, not {kind_name(item)}")
    kind = item.get("type")
    if kind == "message" or (kind is None and "role" in item):
        role = item.get("role")
        if role not in (*INPUT_ROLES, "assistant"):
            raise refuse(
                f"{place}.role",
                f"a message's role is user, system, developer or assistant, not {role!r}",
            )
        if not isinstance(item.get("content"), (str, list)):
            raise refuse(f"{place}.content", "a message needs its content (a string or a list)")
        return "output" if role == "assistant" else "input"
    if not isinstance(kind, str) or not kind:
        raise refuse(
            f"{place}.type", "an item needs its type (or, for a message, role and content)"
        )
    return "result" if kind in RESULT_TYPES else "output"


def _output(
    items: list[Any],
    i: int,
    place: str,
    *,
    book: CallBook,
    texts: list[str],
    calls: list[dict[str, Any]],
) -> None:
    """Check one output item; note its visible text and its call."""
    item = items[i]
    kind = item.get("type", "message")
    if kind == "message":
        texts.append("".join(_output_texts(item["content"])))
    elif kind in CALL_TYPES:
        calls.append(_call(item, place, CALL_TYPES[kind], book))
        check_call_count(calls, place)
    elif kind == "reasoning":
        if not isinstance(item.get("summary"), list):
            raise refuse(
                f"{place}.summary", "a reasoning item needs its summary (a list, may be [])"
            )
        follower = items[i + 1] if i + 1 < len(items) else None
        if not _is_output(follower):
            raise refuse(
                place,
                "a reasoning item must be followed by the item that came after it in the "
                "response output (a message or a call): the API refuses a reasoning item "
                "without its following item",
            )


def _is_output(item: Any) -> bool:
    """Whether `item` (None past the end) is an output item: what may follow reasoning."""
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type")
    if kind == "message" or (kind is None and "role" in item):
        return item.get("role") == "assistant"
    return isinstance(kind, str) and bool(kind) and kind not in RESULT_TYPES


def _call(item: Mapping[str, Any], place: str, argument_key: str, book: CallBook) -> dict[str, Any]:
    kind = item["type"]
    call_id, name = item.get("call_id"), item.get("name")
    if not non_empty_text(call_id):
        raise refuse(f"{place}.call_id", f"a {kind} needs its call_id (its output answers it)")
    if not non_empty_text(name):
        raise refuse(f"{place}.name", f"a {kind} needs the name of the tool it calls")
    if not isinstance(item.get(argument_key), str):
        raise refuse(f"{place}.{argument_key}", f"a {kind}'s {argument_key} is a string")
    book.make(call_id, name, where=f"{place}.call_id")
    return openai_call(call_id, name, item[argument_key])


def _result(item: Mapping[str, Any], place: str, book: CallBook, model: str | None) -> Message:
    kind = item["type"]
    call_id = item.get("call_id")
    if not non_empty_text(call_id):
        raise refuse(f"{place}.call_id", f"a {kind} needs the call_id of the call it answers")
    if "output" not in item:
        raise refuse(f"{place}.output", f"a {kind} needs its output")
    if not book.answer(call_id, where=f"{place}.call_id"):
        raise refuse(
            f"{place}.call_id",
            f"this {kind} answers no call: {call_id!r} is not the call_id of a call "
            "earlier in the batch nor of a call still open in this conversation",
        )
    output = item["output"]
    content: Content = output if isinstance(output, str) else _parts(output)
    if isinstance(content, list) and all(p["type"] == "text" for p in content):
        content = "\n".join(str(p["text"]) for p in content)
    return native_message("responses", model, [item], "tool", content, tool_call_id=call_id)


def _input_content(item: Mapping[str, Any]) -> Content:
    content = item["content"]
    return content if isinstance(content, str) else _parts(content)


def _parts(parts: Any) -> Content:
    """OpenAI Chat parts of the input parts the engine reads (text and images)."""
    out: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            out.append(text_part(part["text"]))
        elif kind == "input_image" and non_empty_text(part.get("image_url")):
            detail = part.get("detail")
            out.append(image_part(part["image_url"], detail if isinstance(detail, str) else None))
    return normal_content(out)


def _output_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts = []
    for part in content:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") in ("output_text", "input_text", "text"):
            texts.append(str(part.get("text", "")))
        elif part.get("type") == "refusal":
            texts.append(str(part.get("refusal", "")))
    return texts


# ---------------------------------------------------------------- classification


def is_reasoning(item: Any) -> bool:
    """A `reasoning` item."""
    kind = item.get("type") if isinstance(item, Mapping) else None
    return isinstance(kind, str) and kind in REASONING_TYPES


def is_opaque(item: Any) -> bool:
    """State only the Responses API reads back (not reasoning): compaction, web search
    and every other item that is not a message, a function or custom call or its output."""
    if not isinstance(item, Mapping) or is_reasoning(item):
        return False
    kind = item.get("type", "message")
    return not isinstance(kind, str) or kind not in VISIBLE_TYPES


def reasoning_units(payload: Any) -> int:
    """Reasoning items of a row's payload (a list of items)."""
    return sum(1 for item in payload if is_reasoning(item)) if isinstance(payload, list) else 0


# ---------------------------------------------------------------- sent back

_TEXT_PARTS = ("output_text", "input_text", "text")


def sent_items(payload: Any, reasoning: bool) -> list[Any]:
    """A row's items as sent back to the Responses API: as stored, in order, unknown
    types included (`reasoning` False: without its reasoning items)."""
    items = payload if isinstance(payload, list) else []
    return list(items) if reasoning else [i for i in items if not is_reasoning(i)]


def with_text(payload: Any, role: str, text: str) -> Any:
    """The items of a row shown shorter (a tool result's stub or preview, a message's
    preview): an output's `output` replaced (its call_id and other keys kept), an input
    message's content the text, an assistant run's first message showing the text (its
    other messages out; reasoning, calls and opaque items as they are)."""
    items = payload if isinstance(payload, list) else []
    if not items or not isinstance(items[0], Mapping):
        return payload
    if role == "tool":
        return [{**items[0], "output": text}]
    if role != "assistant":
        return [{**items[0], "content": text}]
    return with_first_text(
        items,
        text,
        is_text=_is_message,
        set_text=_message_text,
        new=lambda t: {"role": "assistant", "content": t},
        skip=lambda _: False,
    )


def _is_message(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type", "message") == "message"


def _message_text(item: Mapping[str, Any], text: str) -> dict[str, Any]:
    content = item.get("content")
    if not isinstance(content, list):
        return {**item, "content": text}
    parts = with_first_text(
        content,
        text,
        is_text=lambda p: isinstance(p, Mapping) and p.get("type") in _TEXT_PARTS,
        set_text=lambda p, t: {**p, "text": t},
        new=lambda t: {"type": "output_text", "text": t, "annotations": []},
        skip=lambda _: False,
    )
    return {**item, "content": parts}
