"""Message lists in the shapes the OpenAI and Anthropic APIs take.

`to_openai`: each message's `to_openai()` dict, passable as `messages=` to chat
completions.

`to_anthropic` → (system, messages) for the Messages API:
- every system message goes, in order, into the top-level `system` string (the
  Messages API has no system role inside `messages`);
- assistant `tool_calls` become `tool_use` blocks (arguments parsed to an object);
- `tool` results become `tool_result` blocks in a user turn (kind `error` →
  `is_error`), placed before any text of that turn as the API requires;
- consecutive turns of the same role are merged; empty text is dropped and a turn
  left with no content is dropped;
- the list starts with a user turn (a short placeholder is added when filtering left
  an assistant turn first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from contextq.history.types import Message

ANTHROPIC_OPENING = "(earlier conversation omitted)"
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_DATA_URL = re.compile(r"^data:(?P<media>image/[a-zA-Z0-9.+-]+);base64,(?P<data>.+)$", re.S)


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.to_openai() for m in messages]


def to_anthropic(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            text = message.text().strip()
            if text:
                system_parts.append(text)
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = anthropic_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":  # tool results first, then text (API rule)
            turn["content"].sort(key=lambda b: b["type"] != "tool_result")
    if turns and turns[0]["role"] == "assistant":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": ANTHROPIC_OPENING}]})
    system = "\n\n".join(system_parts) or None
    return system, turns


def anthropic_tool_id(call_id: str | None) -> str:
    """Anthropic tool ids match ^[a-zA-Z0-9_-]+$; OpenAI's usually do already."""
    cleaned = _ID_CHARS.sub("_", call_id or "")
    return cleaned or "tool_call"


def anthropic_blocks(message: Message) -> list[dict[str, Any]]:
    """The message's content as Anthropic blocks (tool calls as `tool_use`, a tool
    result as one `tool_result`); [] when it has nothing to send."""
    if message.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": anthropic_tool_id(message.tool_call_id),
        }
        content = _content_blocks(message.content)
        if content:
            block["content"] = content
        if message.kind == "error":
            block["is_error"] = True
        return [block]
    blocks = _content_blocks(message.content)
    if message.role == "assistant":
        for call in message.tool_calls or ():
            function = call.get("function") or {}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": anthropic_tool_id(str(call.get("id", ""))),
                    "name": str(function.get("name", "")) or "tool",
                    "input": _arguments(function.get("arguments")),
                }
            )
    return blocks


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = json.loads(raw)
        except ValueError:
            return {"raw_arguments": raw}
        return value if isinstance(value, dict) else {"value": value}
    return {}


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            text = str(part.get("text", ""))
            if text.strip():
                blocks.append({"type": "text", "text": text})
        elif kind == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            match = _DATA_URL.match(url)
            if match:
                source = {"type": "base64", "media_type": match["media"], "data": match["data"]}
                blocks.append({"type": "image", "source": source})
            elif url:
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
        elif kind in ("input_audio", "file"):
            blocks.append({"type": "text", "text": f"[{kind} attachment not supported here]"})
    return blocks
