"""Anthropic Messages API turns (`MessageParam`s): validate, normalise, classify.

A turn becomes rows (design 26 §2):
- an assistant turn → ONE assistant row whose payload is the whole turn; its content is
  the visible `text` blocks joined (never thinking), its tool calls the `tool_use` blocks;
- a user turn → rows in block order: each `tool_result` block → one `tool` row (payload
  `{"role": "user", "content": [that block]}`), each run of other blocks → one `user`
  row; a string content → one user row, payload as posted;
- a `system` turn (the SDK's mid-conversation `SystemMessageParam`) → one system row.
Every slice keeps the turn's other keys in their order, so the slices of consecutive
rows put back together are the turn as posted.

Refused (what the Messages API refuses, named by place): a role other than user,
assistant or system; a content that is neither a string nor a list; a block that is not
an object with a `type`; a `thinking` block without a non-empty `signature` (its
`thinking` may be ""), `redacted_thinking` without `data`, `tool_use` without `id` or
`name` or an object `input`; a `tool_result` answering no open
call, in an assistant turn, or after other blocks of its user turn; `tool_use` or
thinking in a user turn; a system turn holding other than text blocks. Unknown block
types are kept as they are.
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
from contextq.history.types import Content, Message, Role

ROLES = ("user", "assistant", "system")
_ROW_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system"}
REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
# blocks the engine reads (visible text, images, calls and results); any other type is
# opaque: kept verbatim, sent back to Anthropic alone
VISIBLE_BLOCKS = frozenset(
    {"text", "image", "document", "search_result", "tool_use", "tool_result"}
)
# block types that only the Messages API has: a default-form message holding one is read
# as an Anthropic turn (docs/api.md#native-turns)
ANTHROPIC_ONLY_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "compaction",
        "document",
        "search_result",
    }
)
_USER_REFUSED = {
    "tool_use": "tool_use blocks are the model's: they go in an assistant turn",
    "thinking": "thinking blocks are the model's: they go in an assistant turn",
    "redacted_thinking": "redacted_thinking blocks are the model's: they go in an assistant turn",
}


def at(where: str, field: str) -> str:
    """`messages[3]` + `content[1]` → `messages[3].content[1]` (a bare field when the
    message has no place of its own: a single default-form message)."""
    return f"{where}.{field}" if where else field


def is_anthropic_only(block: Any) -> bool:
    if not isinstance(block, Mapping):
        return False
    kind = block.get("type")
    return isinstance(kind, str) and (
        kind in ANTHROPIC_ONLY_BLOCKS or kind.endswith("_tool_result")
    )


def holds_anthropic_blocks(content: Any) -> bool:
    """Whether a default-form content holds blocks only the Messages API has."""
    return isinstance(content, list) and any(is_anthropic_only(b) for b in content)


def parse_turn(turn: Any, where: str, book: CallBook, model: str | None) -> list[Message]:
    """The rows of one MessageParam (ValidationFailed naming `where…` when refused)."""
    if not isinstance(turn, Mapping):
        raise refuse(where, f"a message is an object with role and content, not {kind_name(turn)}")
    role = turn.get("role")
    if role not in ROLES:
        raise refuse(
            at(where, "role"),
            f"role must be user, assistant or system in format=anthropic, not {role!r} "
            "(tool results are tool_result blocks in a user turn)",
        )
    if "content" not in turn:
        raise refuse(at(where, "content"), "a message needs its content")
    content = turn["content"]
    if not isinstance(content, (str, list)):
        raise refuse(
            at(where, "content"),
            f"content is a string or a list of content blocks, not {kind_name(content)}",
        )
    if isinstance(content, str):
        return [native_message("anthropic", model, dict(turn), _ROW_ROLES[role], content)]
    _check_blocks(content, where)
    if role == "assistant":
        return [_assistant(turn, content, where, book, model)]
    if role == "system":
        return [_system(turn, content, where, model)]
    return _user(turn, content, where, book, model)


def _check_blocks(content: list[Any], where: str) -> None:
    for j, block in enumerate(content):
        place = at(where, f"content[{j}]")
        if not isinstance(block, Mapping):
            raise refuse(place, f"a content block is an object with a type, not {kind_name(block)}")
        kind = block.get("type")
        if not isinstance(kind, str) or not kind:
            raise refuse(at(place, "type"), "a content block needs its type")
        if kind == "text" and not isinstance(block.get("text"), str):
            raise refuse(at(place, "text"), "a text block's text is a string")


def _assistant(
    turn: Mapping[str, Any], content: list[Any], where: str, book: CallBook, model: str | None
) -> Message:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        place = at(where, f"content[{j}]")
        kind = block["type"]
        if kind == "text":
            texts.append(block["text"])
        elif kind == "thinking":
            _check_thinking(block, place)
        elif kind == "redacted_thinking":
            if not non_empty_text(block.get("data")):
                raise refuse(
                    at(place, "data"),
                    "a redacted_thinking block needs its data, exactly as the API returned it",
                )
        elif kind == "tool_use":
            calls.append(_tool_use(block, place, book))
            check_call_count(calls, place)
        elif kind == "tool_result":
            raise refuse(place, "tool_result blocks answer the model: they go in a user turn")
    return native_message(
        "anthropic", model, dict(turn), "assistant", joined_text(texts), tool_calls=calls
    )


def _check_thinking(block: Mapping[str, Any], place: str) -> None:
    if not non_empty_text(block.get("signature")):
        raise refuse(
            at(place, "signature"),
            "a thinking block needs the signature it came with: pass the block back exactly "
            'as the API returned it (its thinking may be "", the signature may not)',
        )
    if not isinstance(block.get("thinking"), str):
        raise refuse(at(place, "thinking"), 'a thinking block\'s thinking is a string (may be "")')


def _tool_use(block: Mapping[str, Any], place: str, book: CallBook) -> dict[str, Any]:
    call_id, name = block.get("id"), block.get("name")
    if not non_empty_text(call_id):
        raise refuse(at(place, "id"), "a tool_use block needs its id (the tool_result answers it)")
    if not non_empty_text(name):
        raise refuse(at(place, "name"), "a tool_use block needs the name of the tool it calls")
    if "input" not in block:
        raise refuse(at(place, "input"), "a tool_use block needs its input (an object)")
    arguments = block["input"]
    if not isinstance(arguments, Mapping):
        raise refuse(
            at(place, "input"), f"a tool_use input is an object, not {kind_name(arguments)}"
        )
    book.make(call_id, name, where=at(place, "id"))
    return openai_call(call_id, name, arguments)


def _system(turn: Mapping[str, Any], content: list[Any], where: str, model: str | None) -> Message:
    for j, block in enumerate(content):
        if block["type"] != "text":
            raise refuse(at(where, f"content[{j}]"), "a system turn holds text blocks only")
    parts = [text_part(b["text"]) for b in content]
    return native_message("anthropic", model, dict(turn), "system", normal_content(parts))


def _user(
    turn: Mapping[str, Any], content: list[Any], where: str, book: CallBook, model: str | None
) -> list[Message]:
    rows: list[Message] = []
    run: list[Any] = []
    for j, block in enumerate(content):
        place = at(where, f"content[{j}]")
        kind = block["type"]
        if kind in _USER_REFUSED:
            raise refuse(place, _USER_REFUSED[kind])
        if kind != "tool_result":
            run.append(block)
            continue
        if run:
            raise refuse(
                place,
                "tool_result blocks come first in a user turn (the Messages API refuses "
                "text or other blocks before them): put them after the results",
            )
        rows.append(_tool_result(turn, block, place, book, model))
    if run:
        slice_ = {**turn, "content": run}
        rows.append(native_message("anthropic", model, slice_, "user", _user_content(run)))
    if not rows:  # an empty content list: one row, as posted
        rows.append(native_message("anthropic", model, dict(turn), "user", ""))
    return rows


def _tool_result(
    turn: Mapping[str, Any],
    block: Mapping[str, Any],
    place: str,
    book: CallBook,
    model: str | None,
) -> Message:
    call_id = block.get("tool_use_id")
    if not non_empty_text(call_id):
        raise refuse(at(place, "tool_use_id"), "a tool_result needs the tool_use_id it answers")
    if not book.answer(call_id, where=at(place, "tool_use_id")):
        raise refuse(
            at(place, "tool_use_id"),
            f"this tool_result answers no call: {call_id!r} is not the id of a tool_use "
            "earlier in the batch nor of a call still open in this conversation",
        )
    result = block.get("content", "")
    if isinstance(result, list):
        normal: Content = _user_content(result)
        if isinstance(normal, list) and all(p["type"] == "text" for p in normal):
            normal = "\n".join(str(p["text"]) for p in normal)
    else:
        normal = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    slice_ = {**turn, "content": [block]}
    error = block.get("is_error") is True
    return native_message(
        "anthropic", model, slice_, "tool", normal, tool_call_id=call_id, error=error
    )


def _user_content(blocks: list[Any]) -> Content:
    """OpenAI parts of the blocks the engine reads (text, images, text documents)."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        source = block.get("source")
        if not isinstance(source, Mapping):
            source = {}
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(text_part(block["text"]))
        elif kind == "image" and source.get("type") == "base64":
            parts.append(
                image_part(data_url(str(source.get("media_type")), str(source.get("data"))))
            )
        elif kind == "image" and source.get("type") == "url":
            parts.append(image_part(str(source.get("url"))))
        elif kind == "document" and source.get("type") == "text":
            parts.append(text_part(str(source.get("data", ""))))
    return normal_content(parts)


# ---------------------------------------------------------------- classification


def is_reasoning(block: Any) -> bool:
    """A thinking or redacted_thinking block."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    return isinstance(kind, str) and kind in REASONING_BLOCKS


def is_opaque(block: Any) -> bool:
    """State only Anthropic reads back (not reasoning): server-tool blocks and their
    results, compaction, text whose citations carry encrypted fields, unknown types."""
    if not isinstance(block, Mapping) or is_reasoning(block):
        return False
    kind = block.get("type")
    if kind == "text":
        citations = block.get("citations")
        return isinstance(citations, list) and any(
            isinstance(c, Mapping) and any(str(k).startswith("encrypted_") for k in c)
            for c in citations
        )
    return not isinstance(kind, str) or kind not in VISIBLE_BLOCKS


def blocks_of(payload: Any) -> list[Any]:
    content = payload.get("content") if isinstance(payload, Mapping) else None
    return content if isinstance(content, list) else []


def reasoning_units(payload: Any) -> int:
    """Reasoning blocks of a turn's payload."""
    return sum(1 for b in blocks_of(payload) if is_reasoning(b))


# ---------------------------------------------------------------- sent back


def sent_blocks(payload: Any, reasoning: bool) -> list[Any]:
    """A row's slice as the blocks sent back to Anthropic: as stored, in order, unknown
    types included (`reasoning` False: without its thinking and redacted_thinking
    blocks); a string content as its text block (none when blank)."""
    content = payload.get("content") if isinstance(payload, Mapping) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        return []
    return list(content) if reasoning else [b for b in content if not is_reasoning(b)]


def with_text(payload: Any, role: str, text: str) -> Any:
    """The slice of a row shown shorter (a tool result's stub or preview, a message's
    preview): a tool_result's content replaced (its tool_use_id, is_error and other keys
    kept), a user or system turn's content the text, an assistant turn's first text
    block the text (its other text blocks out; thinking, calls and opaque blocks as they
    are)."""
    if not isinstance(payload, Mapping):
        return payload
    blocks = blocks_of(payload)
    if role == "tool" and blocks and isinstance(blocks[0], Mapping):
        return {**payload, "content": [{**blocks[0], "content": text}]}
    if role != "assistant":
        return {**payload, "content": text}
    shown = with_first_text(
        blocks,
        text,
        is_text=lambda b: isinstance(b, Mapping) and b.get("type") == "text",
        set_text=lambda b, t: {**b, "text": t},
        new=text_part,
        skip=is_reasoning,
    )
    return {**payload, "content": shown}
