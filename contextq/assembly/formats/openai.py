"""format=openai: OpenAI's Chat Completions `messages` (docs/api.md#native-turns).

One message per piece, in the order laid out, nothing merged: `messages` passes
unchanged to `client.chat.completions.create(messages=…)`. A stored message renders as
its `Message.to_openai()` dict, so its stored count (the open encoding's count of that
JSON) is its count here; a user message's attachments turn its content into a list of
parts (`image_url` with a `data:` URL and `detail`, `input_audio` in MP3 or WAV).
Tools: `{"type": "function", "function": {"name", "description", "parameters"}}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from contextq.assembly.render import charge, empty_breakdown
from contextq.assembly.wire import Rendered, WireFormat
from contextq.history.types import FormatName, Message

if TYPE_CHECKING:
    from contextq.assembly.tools import Tool
    from contextq.assembly.wire import Piece, Target

AUDIO_FORMATS = {"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/wav": "wav", "audio/x-wav": "wav"}


class OpenAIChat(WireFormat):
    name: ClassVar[FormatName] = "openai"
    list_key: ClassVar[str] = "messages"
    native_tools: ClassVar[frozenset[str]] = frozenset({"openai"})

    def text_nodes(self, text: str, role: str) -> list[Any]:
        return [{"role": role, "content": text}]

    def message_nodes(self, message: Message, *, reasoning: bool = True) -> list[Any]:
        # Chat Completions has no place for any vendor's reasoning or opaque state: every
        # message, native or not, renders from its normalised fields
        # (docs/context.md#reasoning-state)
        return [message.to_openai()]

    def attach_parts(
        self, nodes: list[Any], parts: list[dict[str, Any]]
    ) -> tuple[list[Any], list[Any] | None]:
        out = nodes[0]
        content = out.get("content")
        listed = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        listed = [
            p
            for p in listed
            if not (p.get("type") == "text" and not str(p.get("text", "")).strip())
        ]
        return [{**out, "content": [*listed, *parts]}], [{**out, "content": listed}]

    def stored_count_applies(self, message: Message) -> bool:
        # a native row's stored count is its payload's, not its Chat JSON's
        return message.native is None and not isinstance(message.content, list)

    def text_part(self, text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def image_part(self, media_type: str, data_b64: str, detail: str) -> dict[str, Any]:
        url = f"data:{media_type};base64,{data_b64}"
        return {"type": "image_url", "image_url": {"url": url, "detail": detail}}

    def audio_part(self, media_type: str, data_b64: str) -> dict[str, Any] | str:
        audio_format = AUDIO_FORMATS.get(media_type)
        if audio_format is None:
            return f"input_audio takes MP3 or WAV, not {media_type or 'this format'}"
        return {"type": "input_audio", "input_audio": {"data": data_b64, "format": audio_format}}

    def tool(self, tool: Tool) -> dict[str, Any]:
        function: dict[str, Any] = {"name": tool.name, "parameters": dict(tool.schema)}
        if tool.description:
            function["description"] = tool.description
        return {"type": "function", "function": function}

    def render(self, pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
        breakdown = empty_breakdown()
        for piece in pieces:
            charge(breakdown, piece)
        messages = [node for piece in pieces for node in piece.nodes]
        return Rendered({"messages": messages}, sum(breakdown.values()), breakdown, list(pieces))


OPENAI = OpenAIChat()
