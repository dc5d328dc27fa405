"""format=anthropic: the Messages API's `system` and `messages` (docs/api.md#native-turns,
docs/context.md#the-cut-point-and-a-prefix-that-stays-put,
docs/history.md#the-ready-to-send-context).

- system pieces (S, then the history's own system messages) become the top-level
  `system`, a list of text blocks (the Messages API has no system role in `messages`);
- assistant `tool_calls` become `tool_use` blocks (arguments parsed to an object, ids
  cleaned to the API's pattern); `tool` results become `tool_result` blocks in a user
  turn (kind `error` → `is_error`), before any other block of that turn (an API rule),
  so a reminder after a tool result joins the message that carries that result;
- a stored message that came as an Anthropic turn renders as it came
(docs/context.md#reasoning-state): its blocks as stored, in order — thinking and redacted_thinking
  with their signatures, server-tool blocks, unknown types —, its reasoning left out
  only for an earlier turn the target model would strip; one from another vendor, or in
  the default form, renders from its normalised fields (never its opaque state);
- consecutive turns of the same role merge into one message (the rows of one native
  turn merge back into it); empty text is dropped from the default form;
- the list starts with a user turn (a short placeholder when filtering left an
  assistant turn first, or no message at all: the API needs at least one);
- `cache_control: {"type": "ephemeral"}` marks the last system block and the last block
  before the newest turn (2 of the 4 breakpoints the API allows), and
  `stable_prefix_tokens` counts everything up to that second breakpoint (a mark never
  goes on a thinking block, which takes none, nor on a block of a type this version
  does not know: the block before it is marked);
- the current tool loop starts at the newest user message that is not a tool result;
  one that follows tool results (other user and system messages between them aside),
  with nothing of the model's after it, joins them in a tool-result message ending the
  list: the loop goes on through it (`loop_start`).
Images are `image` blocks with a base64 source (JPEG, PNG, GIF, WEBP); no audio.
Tools: `{"name", "description", "input_schema"}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from contextq.assembly.counting import json_tokens
from contextq.assembly.formats.base import OPENING_TEXT
from contextq.assembly.render import charge, empty_breakdown
from contextq.assembly.turn import is_tool_result
from contextq.assembly.wire import Rendered, WireFormat
from contextq.history.native import anthropic as native_anthropic
from contextq.history.types import FormatName, Message, NativeFormat

if TYPE_CHECKING:
    from contextq.assembly.tools import Tool
    from contextq.assembly.wire import Piece, Target

CACHE_CONTROL = {"type": "ephemeral"}
_FORMULA_BLOCKS = ("image", "image_url", "input_audio")
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_DATA_URL = re.compile(r"^data:(?P<media>image/[a-zA-Z0-9.+-]+);base64,(?P<data>.+)$", re.S)
Marker = tuple[int, int] | None  # (message, block) of the last block before the turn


@lru_cache(maxsize=256)
def frame_tokens(role: str, encoding: str) -> int:
    """A message's own cost around its blocks: `{"role", "content": []}` (asked for each
    message a read costs: remembered)."""
    return json_tokens({"role": role, "content": []}, encoding)


class AnthropicMessages(WireFormat):
    name: ClassVar[FormatName] = "anthropic"
    list_key: ClassVar[str] = "messages"
    image_types: ClassVar[frozenset[str] | None] = frozenset(
        ("image/jpeg", "image/png", "image/gif", "image/webp")
    )
    no_audio: ClassVar[str | None] = "the Anthropic Messages API takes no audio input"
    native_tools: ClassVar[frozenset[str]] = frozenset({"anthropic"})
    native: ClassVar[NativeFormat | None] = "anthropic"

    def text_nodes(self, text: str, role: str) -> list[Any]:
        return [{"type": "text", "text": text}]

    def message_nodes(self, message: Message, *, reasoning: bool = True) -> list[Any]:
        native = message.native
        if native is not None and native.format == "anthropic":
            return native_anthropic.sent_blocks(native.payload, reasoning)
        return anthropic_blocks(message)

    def loop_start(self, history: Sequence[Message], newest_user: int | None) -> int:
        """From the newest user message that is not a tool result; when it follows tool
        results and nothing of the model's comes after it, from the user message that
        opened their loop: it goes in one user turn with the results, a tool-result
        message ending the list, and Anthropic validates that open loop as the current
        one. (With the model's turns after it, that loop has ended.) User and system
        messages between the results and it change nothing: they join that same turn
        (system ones are lifted into `system`)."""
        if newest_user is None:
            return 0
        start = newest_user
        if any(history[i].role == "assistant" for i in range(start + 1, len(history))):
            return start
        before = start - 1
        while before >= 0 and (history[before].role == "system" or _opens_turn(history[before])):
            before -= 1
        if before < 0 or not is_tool_result(history[before]):
            return start
        start = before
        while start > 0 and not _opens_turn(history[start]):
            start -= 1
        return start

    def reasoning_tokens(self, nodes: Sequence[Any], count: Callable[[Any], int]) -> int:
        return sum(count(b) for b in nodes if native_anthropic.is_reasoning(b))

    def attach_parts(
        self, nodes: list[Any], parts: list[dict[str, Any]]
    ) -> tuple[list[Any], list[Any] | None]:
        return [*nodes, *parts], None

    def frame(self, role: str, encoding: str) -> int:
        if role == "system":
            return 0
        return frame_tokens("user" if role == "tool" else role, encoding)

    def message_frame(self, message: Message, encoding: str) -> int:
        if message.role == "system" or not self.children_first(message):
            return self.frame(message.role, encoding)
        return _reversed_frame("user" if message.role == "tool" else message.role, encoding)

    def text_part(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def image_part(self, media_type: str, data_b64: str, detail: str) -> dict[str, Any]:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data_b64},
        }

    def tool(self, tool: Tool) -> dict[str, Any]:
        out: dict[str, Any] = {"name": tool.name, "input_schema": dict(tool.schema)}
        if tool.description:
            out["description"] = tool.description
        return out

    def lifts(self, piece: Piece) -> bool:
        return piece.role == "system"

    def head_room(self, encoding: str) -> int:
        """An opening turn and the two cache marks."""
        opening = {"type": "text", "text": OPENING_TEXT}
        return (
            frame_tokens("user", encoding)
            + json_tokens(opening, encoding)
            + 2 * _mark_tokens(encoding)
        )

    def turn_room(self, encoding: str) -> int:
        """A turn with nothing before it: the opening turn's room and the breakpoint
        before the turn (the system block's mark stays)."""
        return self.head_room(encoding) - _mark_tokens(encoding)

    def render(self, pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
        enc = target.encoding
        breakdown = empty_breakdown()
        system: list[dict[str, Any]] = []
        messages: list[dict[str, Any]] = []
        marker: Marker = None
        stable = 0  # tokens of the system blocks and of the messages before the turn
        for index, piece in enumerate(pieces):
            if index == turn_start and messages:
                marker = (len(messages) - 1, len(messages[-1]["content"]) - 1)
            if not piece.nodes:
                continue
            before_turn = index < turn_start
            charge(breakdown, piece)
            stable += piece.tokens if before_turn else 0
            if piece.role == "system":
                system.extend(piece.nodes)
                continue
            role = "user" if piece.role == "tool" else piece.role
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"].extend(piece.nodes)
                continue
            messages.append(self.new_turn(role, piece.nodes, piece.message))
            frame = piece.frame
            breakdown[piece.category] += frame
            stable += frame if before_turn else 0
        if marker is None and turn_start >= len(pieces) and messages:
            marker = (len(messages) - 1, len(messages[-1]["content"]) - 1)
        if not messages or messages[0]["role"] == "assistant":
            block = {"type": "text", "text": OPENING_TEXT}
            messages.insert(0, {"role": "user", "content": [block]})
            opening = frame_tokens("user", enc) + json_tokens(block, enc)
            breakdown["history"] += opening
            stable += opening
            marker = (marker[0] + 1, marker[1]) if marker is not None else None
        marker = _tool_results_first(messages, marker)
        stable += _breakpoints(system, messages, marker, breakdown, enc)
        fields = {"messages": messages, "system": system, "stable_prefix_tokens": stable}
        return Rendered(fields, sum(breakdown.values()), breakdown, list(pieces))


def _markable(block: Any) -> bool:
    """A block that takes a cache breakpoint: a known type other than thinking (whose
    params have no cache_control); an unknown type is sent as it came, unmarked."""
    if not isinstance(block, dict) or native_anthropic.is_reasoning(block):
        return False
    kind = block.get("type")
    return kind in native_anthropic.VISIBLE_BLOCKS or native_anthropic.is_anthropic_only(block)


def _opens_turn(message: Message) -> bool:
    return message.role == "user" and not is_tool_result(message)


@lru_cache(maxsize=256)
def _reversed_frame(role: str, encoding: str) -> int:
    return json_tokens({"content": [], "role": role}, encoding)


def _mark_tokens(encoding: str) -> int:
    return json_tokens({"cache_control": CACHE_CONTROL}, encoding)


def _mark(block: dict[str, Any], encoding: str) -> tuple[dict[str, Any], int]:
    """A copy of `block` with a cache breakpoint, and the tokens that adds."""
    marked = {**block, "cache_control": dict(CACHE_CONTROL)}
    if block.get("type") in _FORMULA_BLOCKS:
        return marked, 0
    if isinstance(block.get("content"), list):
        before = json_tokens({**block, "content": []}, encoding)
        after = json_tokens({**marked, "content": []}, encoding)
    else:
        before, after = json_tokens(block, encoding), json_tokens(marked, encoding)
    return marked, after - before


def _tool_results_first(messages: list[dict[str, Any]], marker: Marker) -> Marker:
    """In each user message, tool results before anything else (an API rule); the
    breakpoint follows its block."""
    for m_index, message in enumerate(messages):
        blocks = message["content"]
        if message["role"] != "user" or not any(b.get("type") == "tool_result" for b in blocks):
            continue
        order = sorted(range(len(blocks)), key=lambda i: blocks[i].get("type") != "tool_result")
        message["content"] = [blocks[i] for i in order]
        if marker is not None and marker[0] == m_index:
            marker = (m_index, order.index(marker[1]))
    return marker


def _breakpoints(
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    marker: Marker,
    breakdown: dict[str, int],
    enc: str,
) -> int:
    """Mark the cache breakpoints; returns the tokens the marks add before the turn."""
    added_total = 0
    if system:
        system[-1], added = _mark(system[-1], enc)
        breakdown["system"] += added
        added_total += added
    if marker is not None:
        blocks = messages[marker[0]]["content"]
        at = marker[1]
        while at > 0 and not _markable(blocks[at]):
            at -= 1  # a thinking block takes no cache_control: the block before it does
        if _markable(blocks[at]):
            blocks[at], added = _mark(blocks[at], enc)
            breakdown["history"] += added
            added_total += added
    return added_total


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
                    "input": tool_arguments(function.get("arguments")),
                }
            )
    return blocks


def tool_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as an object (a JSON string parsed; anything else kept under a
    key): what `tool_use.input` and Gemini's `functionCall.args` take."""
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


ANTHROPIC = AnthropicMessages()
