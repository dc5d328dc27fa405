"""Pieces: the parts of a context, each already in the target format with its tokens.

A piece is one message in OpenAI's shape (`out`), or one role's content blocks in
Anthropic's (`blocks`; consecutive user pieces are merged into one message when the
list is rendered). `tokens` is the piece's share of the final count
(`contextq.assembly.counting`): for OpenAI the whole message, for Anthropic its blocks;
`cost` adds what the piece costs standing alone (the Anthropic message frame), an upper
bound of its share once merged, so a selection made with costs always fits.

History messages are rendered fresh per request but their token counts are remembered
per (message id, format, encoding, provider): a stored message never changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from contextq.assembly.attachments import Attached, Document, documents_text
from contextq.assembly.counting import frame_tokens, json_tokens, node_tokens
from contextq.assembly.inputs import Category
from contextq.calibration import calibrate, split_counter
from contextq.history.formats import anthropic_blocks
from contextq.history.message_tokens import serialise
from contextq.history.types import Message
from contextq.lru import LRU

Format = Literal["openai", "anthropic"]


@dataclass(slots=True)
class Piece:
    category: Category
    role: str  # system | user | assistant | tool (tool results are user turns in Anthropic)
    tokens: int
    out: dict[str, Any] | None = None  # format=openai: the message
    blocks: list[dict[str, Any]] = field(default_factory=list)  # format=anthropic
    frame: int = 0  # format=anthropic: the message frame when standing alone
    file_tokens: int = 0  # of `tokens`: attached images, audio and file text lines
    message: Message | None = None  # the stored message it renders, if any
    documents: list[Document] | None = None  # a documents piece: what it lists

    @property
    def cost(self) -> int:
        return self.tokens + self.frame

    @property
    def wire_role(self) -> str:
        if self.role == "tool":
            return "user"
        return self.role


@dataclass(frozen=True, slots=True)
class Target:
    """Where the pieces go: format, the model's counter (its encoding, calibrated for a
    model whose tokenizer is not published: `contextq.calibration`) and provider, and
    the encoding stored message counts were made with (reused when it is the counter's)."""

    format: Format
    encoding: str
    provider: str
    stored_encoding: str | None = None


CountKey = tuple[str, int, int | None, int | None, str, str, str]


MESSAGE_COUNTS: LRU[CountKey, int] = LRU(200_000)


def text_piece(text: str, role: str, category: Category, target: Target) -> Piece:
    """A generated text message (S, CA, R, the summary, a memory block)."""
    if target.format == "anthropic":
        block = {"type": "text", "text": text}
        frame = 0 if role == "system" else frame_tokens(role, target.encoding)
        return Piece(
            category, role, json_tokens(block, target.encoding), blocks=[block], frame=frame
        )
    out = {"role": role, "content": text}
    return Piece(category, role, json_tokens(out, target.encoding), out=out)


def documents_piece(
    documents: list[Document], ids: Mapping[str, int], category: Category, target: Target
) -> Piece:
    piece = text_piece(documents_text(documents, ids), "user", category, target)
    piece.documents = documents
    return piece


def _key(message: Message, target: Target) -> CountKey:
    """A stored message's count key: its id, seq, stored count and the hash of a text
    content (a str caches its hash) tell it apart from any other message that might
    reuse an id outside the store."""
    content = message.content
    return (
        message.id or "",
        message.seq,
        message.token_count,
        hash(content) if isinstance(content, str) else None,
        target.format,
        target.encoding,
        target.provider,
    )


def _frame(role: str, target: Target) -> int:
    if target.format != "anthropic" or role == "system":
        return 0
    return frame_tokens("user" if role == "tool" else role, target.encoding)


def _stored_applies(message: Message, target: Target) -> bool:
    """Whether the message's stored count is what its OpenAI JSON counts in the target's
    encoding (before any calibration: `contextq.calibration`)."""
    return (
        target.format == "openai"
        and message.token_count is not None
        and target.stored_encoding == target.encoding.partition("+")[0]
        and not isinstance(message.content, list)
    )


def _from_stored(message: Message, rendered: Any, target: Target) -> int:
    """The stored count as the target counts it: as is, or calibrated by the kinds of
    the message's JSON (what a recount of the sent message does)."""
    assert message.token_count is not None
    _, family = split_counter(target.encoding)
    if family is None:
        return message.token_count
    sent = rendered if rendered is not None else message.to_openai()
    return calibrate(message.token_count, serialise(sent), family)


def known_cost(message: Message, target: Target) -> int | None:
    """What `message_piece(message, target).cost` will be, when it is known without
    rendering the message (no attachments): its stored count (calibrated for a model
    counted by calibration), or a remembered one."""
    if _stored_applies(message, target):
        if target.stored_encoding == target.encoding:
            return message.token_count
        return _base_tokens(message, None, target)
    if message.id is None:
        return None
    found = MESSAGE_COUNTS.get(_key(message, target))
    return None if found is None else found + _frame(message.role, target)


def _base_tokens(message: Message, rendered: Any, target: Target) -> int:
    """The message's own tokens (no attachments): its stored count when that is exact
    (OpenAI, the stored encoding, a text content: counted at insert exactly this way),
    else remembered per message (`_key`)."""
    if (
        target.format == "openai"
        and message.token_count is not None
        and target.stored_encoding == target.encoding
        and not isinstance(message.content, list)
    ):
        return message.token_count
    key = _key(message, target)
    if message.id is not None:
        found = MESSAGE_COUNTS.get(key)
        if found is not None:
            return found
    if target.format == "anthropic":
        tokens = sum(_node(b, target) for b in rendered)
    elif _stored_applies(message, target):
        tokens = _from_stored(message, rendered, target)  # counted at insert this way
    else:
        tokens = _node(rendered, target)
    if message.id is not None:
        MESSAGE_COUNTS.put(key, tokens)
    return tokens


def _node(node: Mapping[str, Any], target: Target) -> int:
    return node_tokens(node, encoding=target.encoding, provider=target.provider)


def message_piece(
    message: Message,
    target: Target,
    attached: Attached | None = None,
    *,
    category: Category = "history",
) -> Piece:
    """A stored message, with its attached image/audio parts and text lines if any."""
    parts = attached.parts if attached is not None else []
    extra = attached.part_tokens if attached is not None else 0
    role = message.role
    if target.format == "anthropic":
        blocks = anthropic_blocks(message)
        tokens = _base_tokens(message, blocks, target)
        if parts:
            blocks = [*blocks, *parts]
        return Piece(
            category,
            role,
            tokens + extra,
            blocks=blocks,
            frame=_frame(role, target),
            file_tokens=extra,
            message=message,
        )
    out = message.to_openai()
    if not parts:
        return Piece(category, role, _base_tokens(message, out, target), out=out, message=message)
    content = out.get("content")
    listed = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    listed = [
        p for p in listed if not (p.get("type") == "text" and not str(p.get("text", "")).strip())
    ]
    out["content"] = [*listed, *parts]
    tokens = json_tokens({**out, "content": []}, target.encoding)
    tokens += sum(_node(p, target) for p in listed) + extra
    return Piece(category, role, tokens, out=out, file_tokens=extra, message=message)
