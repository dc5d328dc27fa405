"""format=responses: OpenAI's Responses API `instructions` and `input` (docs/api.md#native-turns).

Ready for `client.responses.create(model=…, instructions=…, input=…, tools=…)`:
- S is `instructions`, a string; the history's own system messages stay in place as
  `message` items of role `system`;
- a user message is a `message` item whose content is `input_text` parts (its
  attachments add `input_image` parts: a `data:` URL with `detail`);
- an assistant message is a `message` item with its text as a string (the SDK's
  `EasyInputMessageParam`: an `output_text` content validates only as an output
  message with an `id` and `status` the history does not have), then one
  `function_call` item per call (`call_id`, `name`, `arguments` as a JSON string);
- a tool result is a `function_call_output` item (`call_id`, `output`: the result's
  text, an image in it named `[image]`).
A stored message that came as Responses items renders as they came
(docs/context.md#reasoning-state): its items as stored, in order — `reasoning` items (ids,
summaries,
`encrypted_content`) directly before the item that followed them, `phase`, ids,
compaction and unknown items —, its reasoning items left out only for an earlier turn
the target model would strip; one from another vendor, or in the default form, renders
from its normalised fields (never its opaque state).
Items are flat: nothing merges. A list left with no item at all opens with a short
user message. No audio part (the Responses API's message content has none): audio is
a text line. Tools: `{"type": "function", "name", "description", "parameters",
"strict": false}` (strict is the API's default otherwise, which most schemas fail).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from contextq.assembly.counting import Media, node_tokens
from contextq.assembly.formats.base import OPENING_TEXT
from contextq.assembly.render import charge, empty_breakdown
from contextq.assembly.wire import Rendered, WireFormat
from contextq.history.native import responses as native_responses
from contextq.history.types import FormatName, Message, NativeFormat

if TYPE_CHECKING:
    from contextq.assembly.tools import Tool
    from contextq.assembly.wire import Piece, Target


class OpenAIResponses(WireFormat):
    name: ClassVar[FormatName] = "responses"
    list_key: ClassVar[str] = "input"
    no_audio: ClassVar[str | None] = (
        "the Responses API takes no audio part in a message (input_text, input_image, "
        "input_file only)"
    )
    native_tools: ClassVar[frozenset[str]] = frozenset({"openai"})
    native: ClassVar[NativeFormat | None] = "responses"

    def text_nodes(self, text: str, role: str) -> list[Any]:
        return [_message(role, [self.text_part(text)])]

    def system_nodes(self, text: str) -> list[Any]:
        return [text]  # `instructions`

    def message_nodes(self, message: Message, *, reasoning: bool = True) -> list[Any]:
        native = message.native
        if native is not None and native.format == "responses":
            return native_responses.sent_items(native.payload, reasoning)
        if message.role == "tool":
            output = {"type": "function_call_output", "call_id": message.tool_call_id or ""}
            return [{**output, "output": message.text()}]
        if message.role == "assistant":
            text = message.text()
            items: list[Any] = [_message("assistant", text)] if text.strip() else []
            for call in message.to_openai().get("tool_calls") or ():
                function = call["function"]
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call["id"],
                        "name": function["name"],
                        "arguments": function["arguments"],
                    }
                )
            return items
        parts = _input_parts(message.content)
        return [_message(message.role, parts)] if parts else []

    def reasoning_tokens(self, nodes: Sequence[Any], count: Callable[[Any], int]) -> int:
        return sum(count(item) for item in nodes if native_responses.is_reasoning(item))

    def attach_parts(
        self, nodes: list[Any], parts: list[dict[str, Any]]
    ) -> tuple[list[Any], list[Any] | None]:
        if nodes and isinstance(nodes[-1].get("content"), list):
            last = {**nodes[-1], "content": [*nodes[-1]["content"], *parts]}
            return [*nodes[:-1], last], None
        opened = _message("user", [])  # a message with no text of its own: its parts alone
        return [*nodes, {**opened, "content": list(parts)}], [*nodes, opened]

    def media_of(self, node: Mapping[str, Any]) -> Media | None:
        if node.get("type") == "input_image":
            url = str(node.get("image_url") or "")
            data = url.split(",", 1)[1] if url.startswith("data:") and "," in url else None
            return Media("image", data, str(node.get("detail") or "high"))
        return None

    def text_part(self, text: str) -> dict[str, Any]:
        return {"type": "input_text", "text": text}

    def image_part(self, media_type: str, data_b64: str, detail: str) -> dict[str, Any]:
        url = f"data:{media_type};base64,{data_b64}"
        return {"type": "input_image", "image_url": url, "detail": detail}

    def tool(self, tool: Tool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "function", "name": tool.name}
        if tool.description:
            out["description"] = tool.description
        return {**out, "parameters": dict(tool.schema), "strict": False}

    def lifts(self, piece: Piece) -> bool:
        return piece.category == "system"

    def head_room(self, encoding: str) -> int:
        """The opening message of a list left with no item."""
        return _count(_opening(), encoding)

    def turn_room(self, encoding: str) -> int:
        return self.head_room(encoding)  # never opened when a turn is there

    def render(self, pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
        breakdown = empty_breakdown()
        instructions: list[str] = []
        items: list[Any] = []
        for piece in pieces:
            if not piece.nodes:
                continue
            charge(breakdown, piece)
            if piece.category == "system":
                instructions.extend(piece.nodes)
            else:
                items.extend(piece.nodes)
        if not items:
            items.append(_opening())
            breakdown["history"] += _count(items[0], target.encoding)
        fields = {"instructions": "".join(instructions) or None, "input": items}
        return Rendered(fields, sum(breakdown.values()), breakdown, list(pieces))


def _message(role: str, content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


def _count(node: dict[str, Any], encoding: str) -> int:
    """A text-only node's count (no media: the provider's formulas do not apply)."""
    return node_tokens(node, encoding=encoding, provider="openai")


def _opening() -> dict[str, Any]:
    return _message("user", [{"type": "input_text", "text": OPENING_TEXT}])


def _input_parts(content: Any) -> list[dict[str, Any]]:
    """A user or system message's content as input parts (blank text dropped; an audio or
    file part named in a text line: no such part in a Responses message)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}] if content.strip() else []
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            text = str(part.get("text", ""))
            if text.strip():
                parts.append({"type": "input_text", "text": text})
        elif kind == "image_url":
            image_url = part.get("image_url") or {}
            url = str(image_url.get("url", ""))
            if url:
                detail = str(image_url.get("detail") or "auto")
                parts.append({"type": "input_image", "image_url": url, "detail": detail})
        elif kind in ("input_audio", "file"):
            parts.append({"type": "input_text", "text": f"[{kind} attachment not supported here]"})
    return parts


RESPONSES = OpenAIResponses()
