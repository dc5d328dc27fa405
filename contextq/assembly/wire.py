"""The protocol every wire format implements (the answer's `format=`, docs/history.md#the-answer),
and what it renders: the pieces, their target and the render's result.

The engine builds a context from *pieces* (`contextq.assembly.pieces`): each generated
text (S, CA, R, the summary, P, a documents message) and each stored message becomes a
piece holding its *nodes* in the target format, with their tokens. Everything that
differs from one vendor's API to another is asked of the format, through this class:

- nodes: `prepare` (the visible history, once per answer), `text_nodes` (a generated
  text), `system_nodes` (S), `message_nodes` (a stored message; a same-vendor native
  payload — `native`, the vendor whose payloads this format carries — is rendered here,
  verbatim, its reasoning left out when told), `attach_parts` (a user message's
  image/audio parts put in), `frame` (what a turn costs around its nodes when the render
  merges consecutive same-role pieces into one turn);
- reasoning (docs/context.md#reasoning-state): `loop_start` (where the current tool loop
  starts, whose reasoning is always sent), `reasoning_tokens` (of a message's nodes,
  what is reasoning: `token_breakdown.reasoning`);
- counting: `media_of` (its image and audio nodes), `children` (the key of a node's
  part list), `stored_count_applies` (whether a stored message's count is its exact
  count here: only OpenAI's Chat JSON, for a message with no native payload);
- files: `text_part`, `image_part`, `audio_part`, `image_types`, `no_audio`;
- tools: `tool` (a neutral definition in this format), `tools` (the list as sent),
  `native_tools` (the vendors whose own tool shapes pass through);
- render: `render` (ordered pieces → the answer's wire fields, `list_key` first, the
  count and breakdown), `head_room`/`turn_room` (what the render may add on top of the
  pieces' costs: an opening turn, cache marks; the budget keeps room for it).

A format is one module with one instance of its class, registered in
`contextq.assembly.formats.FORMATS` under its name in `contextq.history.types.FormatName`.

This module is below both the formats and the modules that build pieces for them
(`pieces`, `attachments`, `render`): `Piece`, `Target` (which names its format) and
`Rendered` are defined here with the protocol that takes and returns them, so that no
module of the assembly imports one that imports it back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from contextq.assembly.attachments import Document
from contextq.assembly.counting import Media, chat_media
from contextq.assembly.inputs import Category
from contextq.assembly.tools import Tool
from contextq.history.types import FormatName, Message, NativeFormat
from contextq.reasoning_rules import UNKNOWN, ReasoningRule


@dataclass(slots=True)
class Piece:
    category: Category
    role: str  # system | user | assistant | tool (the format maps it to its wire role)
    tokens: int
    nodes: list[Any] = field(default_factory=list)  # in the target format
    frame: int = 0  # the turn's own cost when standing alone (a format that merges turns)
    file_tokens: int = 0  # of `tokens`: attached images, audio and file text lines
    reasoning_tokens: int = 0  # of `tokens`: reasoning state sent (a same-vendor payload)
    # reasoning units (blocks, items, parts) of its message left out, and why:
    # ("other_vendor" | "earlier_turns" | "prefix_changed", n)
    reasoning_left: tuple[str, int] | None = None
    message: Message | None = None  # the stored message it renders, if any
    shown: bool = False  # a preview of it (cut to fit), not the message itself
    documents: list[Document] | None = None  # a documents piece: what it lists

    @property
    def cost(self) -> int:
        return self.tokens + self.frame


@dataclass(frozen=True, slots=True)
class Target:
    """Where the pieces go: the wire format, the model's counter (its encoding,
    calibrated for a model whose tokenizer is not published: `contextq.calibration`)
    and provider, the encoding stored message counts were made with (reused when it is
    the counter's), and what the model does with earlier turns' reasoning."""

    wire: WireFormat
    encoding: str
    provider: str
    stored_encoding: str | None = None
    reasoning: ReasoningRule = UNKNOWN

    @property
    def format(self) -> FormatName:
        return self.wire.name


@dataclass(slots=True)
class Rendered:
    """`fields`: the answer's wire fields in order, the list first under the format's
    `list_key` (`messages`, and Anthropic's `system` and `stable_prefix_tokens`, …)."""

    fields: dict[str, Any]
    token_count: int
    breakdown: dict[str, int]
    kept: list[Piece] = field(default_factory=list)


class WireFormat(ABC):
    """One wire format (module docstring)."""

    name: ClassVar[FormatName]
    list_key: ClassVar[str]  # the answer's list of turns or items: messages | input | …
    children: ClassVar[str] = "content"  # the key of a node's list of parts
    image_types: ClassVar[frozenset[str] | None] = None  # image media types taken (None: all)
    no_audio: ClassVar[str | None] = None  # why this format takes no audio part at all
    native_tools: ClassVar[frozenset[str]] = frozenset()  # vendor tool shapes passed through
    native: ClassVar[NativeFormat | None] = None  # whose native payloads render verbatim

    # --- pieces ---------------------------------------------------------------------

    def prepare(self, history: Sequence[Message]) -> Sequence[Message]:
        """The visible history before it becomes pieces (same length and order: Gemini
        names each tool result after its call's function)."""
        return history

    @abstractmethod
    def text_nodes(self, text: str, role: str) -> list[Any]:
        """A generated text of `role` (user, or system) as this format's nodes."""

    def system_nodes(self, text: str) -> list[Any]:
        """S, the system prompt (a format may send it outside the list)."""
        return self.text_nodes(text, "system")

    @abstractmethod
    def message_nodes(self, message: Message, *, reasoning: bool = True) -> list[Any]:
        """A stored message as this format's nodes ([] when it has nothing to send): its
        native payload as stored when it is this format's vendor's (`reasoning` False:
        without its reasoning), else from its normalised fields (no opaque state)."""

    def loop_start(self, history: Sequence[Message], newest_user: int | None) -> int:
        """The index where the current tool loop starts: the newest user message that is
        not a tool result (`newest_user`; 0 when there is none: all of it is)."""
        return 0 if newest_user is None else newest_user

    def reasoning_tokens(self, nodes: Sequence[Any], count: Callable[[Any], int]) -> int:
        """Of `nodes` (counted one by one with `count`), the tokens of reasoning state."""
        return 0

    @abstractmethod
    def attach_parts(
        self, nodes: list[Any], parts: list[dict[str, Any]]
    ) -> tuple[list[Any], list[Any] | None]:
        """A stored message's `nodes` with its attachments' parts put in; and, when
        putting them in changes how the message's own nodes count (OpenAI: a string
        content becomes a list of parts), the nodes to count instead (the parts' own
        tokens are added by the caller), else None (its count plus the parts')."""

    def frame(self, role: str, encoding: str) -> int:
        """A turn's own cost around its nodes when it stands alone (0: the nodes are
        the turns themselves, or the role's nodes go outside the list)."""
        return 0

    def message_frame(self, message: Message, encoding: str) -> int:
        """`frame` of the turn a stored message opens (a native turn keeps its own key
        order: `children_first`)."""
        return self.frame(message.role, encoding)

    def children_first(self, message: Message | None) -> bool:
        """Whether the turn `message` opens lists its parts before its role: a native
        payload of this format's vendor keeps its own key order (google-genai dumps a
        Content as `{"parts", "role"}`)."""
        native = message.native if message is not None else None
        if native is None or native.format != self.native:
            return False
        payload = native.payload
        if not isinstance(payload, dict):  # a stored payload is JSON: a dict (and fast)
            return False
        for key in payload:  # the first of the two keys (role comes first, mostly)
            if key == "role":
                return False
            if key == self.children:
                return "role" in payload
        return False

    def new_turn(self, role: str, nodes: Sequence[Any], message: Message | None) -> dict[str, Any]:
        """A turn of the render's list opened by a piece (`message`: the stored message
        it renders, if any), its role and nodes in the order `children_first` says."""
        if self.children_first(message):
            return {self.children: list(nodes), "role": role}
        return {"role": role, self.children: list(nodes)}

    def stored_count_applies(self, message: Message) -> bool:
        """Whether the message's stored count (the open encoding's count of its OpenAI
        Chat JSON, `contextq.history.message_tokens`) is what its nodes count here."""
        return False

    def media_of(self, node: Mapping[str, Any]) -> Media | None:
        """Whether `node` is an image or audio part (counted by formula, docs/token-counting.md)."""
        return chat_media(node)

    # --- files ----------------------------------------------------------------------

    @abstractmethod
    def text_part(self, text: str) -> dict[str, Any]:
        """A text part of a user message (an attachment's label or text line)."""

    @abstractmethod
    def image_part(self, media_type: str, data_b64: str, detail: str) -> dict[str, Any]:
        """An image part (a media type in `image_types`)."""

    def audio_part(self, media_type: str, data_b64: str) -> dict[str, Any] | str:
        """An audio part, or why this audio cannot be one (`no_audio` aside)."""
        return f"format={self.name} takes no audio part"

    # --- tools ----------------------------------------------------------------------

    @abstractmethod
    def tool(self, tool: Tool) -> dict[str, Any]:
        """A neutral tool definition in this format."""

    def tools(self, definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The definitions as the answer's `tools` (a format may wrap them)."""
        return definitions

    # --- render ---------------------------------------------------------------------

    @abstractmethod
    def render(self, pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
        """The final list from ordered pieces (`turn_start`: the first piece of the
        newest turn, len(pieces) when there is none), its count and breakdown."""

    def lifts(self, piece: Piece) -> bool:
        """Whether the render sends `piece` outside the list (a system field), wherever
        it stands among the pieces (the binding rule's canonical prefix puts it first)."""
        return False

    def head_room(self, encoding: str) -> int:
        """What the render may add on top of the pieces' costs (an opening turn, cache
        marks): kept out of the budget with S."""
        return 0

    def turn_room(self, encoding: str) -> int:
        """Of `head_room`, what a newest turn may take when nothing stands before it."""
        return 0
