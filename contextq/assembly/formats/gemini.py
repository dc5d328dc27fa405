"""format=gemini: Google's `system_instruction` and `contents` (docs/api.md#native-turns).

Ready for `client.models.generate_content(model=…, contents=…,
config={"system_instruction": …, "tools": …})`:
- system pieces (S, then the history's own system messages) become the parts of
  `system_instruction` (`{"parts": [{"text": …}]}`: Gemini has no system role in
  `contents`);
- a content has role `user` or `model` and `parts`: `text`, `inlineData`
  (`{"mimeType", "data"}`: an image or audio attached), `functionCall` (`name`, `args`
  as an object, the call's `id`), `functionResponse` (the call's `name` — each tool
  result is named after its call, `prepare` —, `response: {"output": …}` or
  `{"error": …}` for a failed one, the call's `id`);
- a stored message that came as a Gemini content renders as it came
(docs/context.md#reasoning-state): its parts as stored, in order, never merged or split — thought
  parts, `thoughtSignature`s on the parts that carried them, unknown fields —; one from
  another vendor, or in the default form, renders from its normalised fields (never its
  opaque state). The first `functionCall` part of each model step that has no signature
  of its own carries Google's documented dummy signature (`DUMMY_SIGNATURE`: its tokens
  count in history, not as reasoning): the current turn's steps need it
  (docs/context.md#reasoning-state), and
  earlier steps keep it once the turn is over, so that what was sent before a new user
  message stays byte for byte what it was (providers' prompt caches);
- consecutive contents of the same role merge into one, function responses first, so
  parallel calls go as FC…FC in one model content and FR…FR in the next user one;
- the list starts with a user content (a short placeholder when filtering left a model
  content first, or no content at all: a function call must follow a user turn).
Images: PNG, JPEG, WEBP, HEIC, HEIF; audio: WAV, MP3, AIFF, AAC, OGG, FLAC (a model
that takes audio). Tools: `[{"function_declarations": [{"name", "description",
"parameters_json_schema"}]}]` (any JSON schema; `parameters` takes only Gemini's
OpenAPI subset).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from contextq.assembly.counting import Media, json_tokens
from contextq.assembly.formats.anthropic import tool_arguments
from contextq.assembly.formats.base import OPENING_TEXT
from contextq.assembly.render import charge, empty_breakdown
from contextq.assembly.wire import Rendered, WireFormat
from contextq.history.native import gemini as native_gemini
from contextq.history.types import FormatName, Message, NativeFormat

if TYPE_CHECKING:
    from contextq.assembly.tools import Tool
    from contextq.assembly.wire import Piece, Target

AUDIO_TYPES = {
    "audio/wav": "audio/wav",
    "audio/x-wav": "audio/wav",
    "audio/mpeg": "audio/mp3",
    "audio/mp3": "audio/mp3",
    "audio/aiff": "audio/aiff",
    "audio/aac": "audio/aac",
    "audio/ogg": "audio/ogg",
    "audio/flac": "audio/flac",
}
_INPUT_AUDIO = {"wav": "audio/wav", "mp3": "audio/mp3"}
Content = dict[str, Any]


class GeminiContents(WireFormat):
    name: ClassVar[FormatName] = "gemini"
    list_key: ClassVar[str] = "contents"
    children: ClassVar[str] = "parts"
    native: ClassVar[NativeFormat | None] = "gemini"
    image_types: ClassVar[frozenset[str] | None] = frozenset(
        ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")
    )

    def prepare(self, history: Sequence[Message]) -> Sequence[Message]:
        """Each tool result named after its call's function (a `functionResponse` needs
        it); a result whose call is not in the history keeps its own name, else `tool`
        (a Gemini row's own part has its name: it is left as it is)."""
        if not any(_unnamed(m) for m in history):
            return history
        names = {
            str(call.get("id", "")): str((call.get("function") or {}).get("name", ""))
            for m in history
            if m.role == "assistant"
            for call in m.tool_calls or ()
        }
        return [
            replace(m, name=names.get(str(m.tool_call_id)) or "tool") if _unnamed(m) else m
            for m in history
        ]

    def text_nodes(self, text: str, role: str) -> list[Any]:
        return [{"text": text}]

    def message_nodes(self, message: Message, *, reasoning: bool = True) -> list[Any]:
        native = message.native
        if native is not None and native.format == "gemini":
            parts = native_gemini.sent_parts(native.payload, reasoning)
        else:
            parts = self._normal_parts(message)
        if message.role == "assistant":
            return native_gemini.with_dummy_signature(parts)
        return parts

    def reasoning_tokens(self, nodes: Sequence[Any], count: Callable[[Any], int]) -> int:
        """Thought parts whole; of a part carrying a signature (not the dummy), what the
        signature adds to it."""
        total = 0
        for part in nodes:
            if native_gemini.is_thought(part):
                total += count(part)
            elif native_gemini.signature_of(part) not in (None, native_gemini.DUMMY_SIGNATURE):
                total += max(0, count(part) - count(native_gemini.unsigned(part)))
        return total

    def _normal_parts(self, message: Message) -> list[Any]:
        if message.role == "tool":
            key = "error" if message.kind == "error" else "output"
            response: dict[str, Any] = {
                "name": message.name or "tool",
                "response": {key: message.text()},
            }
            if message.tool_call_id:
                response["id"] = message.tool_call_id
            return [{"functionResponse": response}]
        parts = _parts(message.content)
        if message.role == "assistant":
            for call in message.tool_calls or ():
                function = call.get("function") or {}
                made: dict[str, Any] = {
                    "name": str(function.get("name", "")) or "tool",
                    "args": tool_arguments(function.get("arguments")),
                }
                if call.get("id"):
                    made["id"] = str(call["id"])
                parts.append({"functionCall": made})
        return parts

    def attach_parts(
        self, nodes: list[Any], parts: list[dict[str, Any]]
    ) -> tuple[list[Any], list[Any] | None]:
        return [*nodes, *parts], None

    def frame(self, role: str, encoding: str) -> int:
        if role == "system":
            return json_tokens({"parts": []}, encoding)  # `system_instruction` around its parts
        return _frame(_wire_role(role), encoding)

    def message_frame(self, message: Message, encoding: str) -> int:
        if message.role == "system" or not self.children_first(message):
            return self.frame(message.role, encoding)
        return _reversed_frame(_wire_role(message.role), encoding)

    def media_of(self, node: Mapping[str, Any]) -> Media | None:
        inline = node.get("inlineData")
        if not isinstance(inline, Mapping):
            return None
        kind = str(inline.get("mimeType", "")).partition("/")[0]
        if kind not in ("image", "audio"):
            return None
        return Media("image" if kind == "image" else "audio", str(inline.get("data", "")))

    def text_part(self, text: str) -> dict[str, Any]:
        return {"text": text}

    def image_part(self, media_type: str, data_b64: str, detail: str) -> dict[str, Any]:
        return {"inlineData": {"mimeType": media_type, "data": data_b64}}

    def audio_part(self, media_type: str, data_b64: str) -> dict[str, Any] | str:
        mime = AUDIO_TYPES.get(media_type)
        if mime is None:
            given = media_type or "this format"
            return f"Gemini takes WAV, MP3, AIFF, AAC, OGG or FLAC audio, not {given}"
        return {"inlineData": {"mimeType": mime, "data": data_b64}}

    def tool(self, tool: Tool) -> dict[str, Any]:
        out: dict[str, Any] = {"name": tool.name}
        if tool.description:
            out["description"] = tool.description
        return {**out, "parameters_json_schema": dict(tool.schema)}

    def tools(self, definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"function_declarations": definitions}] if definitions else []

    def lifts(self, piece: Piece) -> bool:
        return piece.role == "system"

    def head_room(self, encoding: str) -> int:
        """The opening content of a list that starts with the model's."""
        return _frame("user", encoding) + json_tokens({"text": OPENING_TEXT}, encoding)

    def turn_room(self, encoding: str) -> int:
        return self.head_room(encoding)  # never opened when the turn starts the list

    def render(self, pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
        enc = target.encoding
        breakdown = empty_breakdown()
        system: Content | None = None
        contents: list[Content] = []
        for piece in pieces:
            if not piece.nodes:
                continue
            charge(breakdown, piece)
            if piece.role == "system":
                if system is None:
                    system = {"parts": []}
                    breakdown[piece.category] += json_tokens(system, enc)
                system["parts"].extend(piece.nodes)
                continue
            role = _wire_role(piece.role)
            if contents and contents[-1]["role"] == role:
                contents[-1]["parts"].extend(piece.nodes)
                continue
            contents.append(self.new_turn(role, piece.nodes, piece.message))
            breakdown[piece.category] += piece.frame
        if not contents or contents[0]["role"] == "model":
            contents.insert(0, {"role": "user", "parts": [{"text": OPENING_TEXT}]})
            breakdown["history"] += self.head_room(enc)
        for content in contents:  # function responses first, as their calls were made
            if content["role"] == "user":
                content["parts"].sort(key=lambda p: not native_gemini.is_response(p))
        fields = {"system_instruction": system, "contents": contents}
        return Rendered(fields, sum(breakdown.values()), breakdown, list(pieces))


def _unnamed(message: Message) -> bool:
    """A tool result rendered from its normalised fields with no name of its own (a
    Gemini one goes as its own `functionResponse` part, its name in it)."""
    native = message.native
    return (
        message.role == "tool"
        and not message.name
        and (native is None or native.format != "gemini")
    )


def _wire_role(role: str) -> str:
    return "model" if role == "assistant" else "user"


@lru_cache(maxsize=256)
def _frame(role: str, encoding: str) -> int:
    return json_tokens({"role": role, "parts": []}, encoding)


@lru_cache(maxsize=256)
def _reversed_frame(role: str, encoding: str) -> int:
    return json_tokens({"parts": [], "role": role}, encoding)


def _parts(content: Any) -> list[dict[str, Any]]:
    """A message's content as parts (blank text dropped; an image or audio given as a
    `data:` URL or `input_audio` inline, an image by URL or a file named in a text)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}] if content.strip() else []
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            text = str(part.get("text", ""))
            if text.strip():
                parts.append({"text": text})
        elif kind == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            media, _, data = url.removeprefix("data:").partition(";base64,")
            if url.startswith("data:") and data:
                parts.append({"inlineData": {"mimeType": media, "data": data}})
            elif url:
                parts.append({"text": f"[image: {url}]"})
        elif kind == "input_audio":
            audio = part.get("input_audio") or {}
            mime = _INPUT_AUDIO.get(str(audio.get("format", "")), "audio/wav")
            parts.append({"inlineData": {"mimeType": mime, "data": str(audio.get("data", ""))}})
        elif kind == "file":
            parts.append({"text": "[file attachment not supported here]"})
    return parts


GEMINI = GeminiContents()
