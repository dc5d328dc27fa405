"""Pieces: the parts of a context, each already in the target format with its tokens.

A piece is one part's *nodes* in the target format (`contextq.assembly.formats`): one
message in OpenAI's Chat shape, one role's content blocks in Anthropic's (consecutive
same-role pieces merged into one turn when the list is rendered), and so on. `tokens`
is the piece's share of the final count (`contextq.assembly.counting`): the count of its
nodes; `cost` adds what the piece costs standing alone (the frame of a turn the render
may merge with its neighbours), an upper bound of its share once merged, so a
selection made with costs always fits.

History messages are rendered fresh per request but their token counts are remembered
per (message id, format, encoding, provider, what of its reasoning is sent): a stored
message never changes.

Reasoning (docs/context.md#reasoning-state): a message in the current tool loop (`current`)
sends its same-vendor reasoning; an earlier one when the target model keeps earlier
turns' reasoning (`Target.reasoning`, `contextq.reasoning_rules`). A piece's tokens are
what it costs as sent, so a message whose reasoning is left out costs less; of them,
`reasoning_tokens` are the reasoning's (`token_breakdown.reasoning`), and
`reasoning_left` says how many reasoning units were left out, and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from contextq.assembly.attachments import Attached, Document, documents_text
from contextq.assembly.counting import node_tokens
from contextq.assembly.inputs import Category
from contextq.assembly.wire import Piece, Target
from contextq.calibration import calibrate, split_counter
from contextq.history.message_tokens import serialise
from contextq.history.native import reasoning_units
from contextq.history.types import Message
from contextq.lru import LRU

CountKey = tuple[str, int, int | None, int | None, str, str, str, bool]
Counted = tuple[int, int]  # a message's tokens as sent, and of them its reasoning's

MESSAGE_COUNTS: LRU[CountKey, Counted] = LRU(200_000)


def text_piece(text: str, role: str, category: Category, target: Target) -> Piece:
    """A generated text message (S, CA, R, the summary, a memory block)."""
    wire = target.wire
    nodes = wire.system_nodes(text) if category == "system" else wire.text_nodes(text, role)
    tokens = sum(_node(n, target) for n in nodes)
    return Piece(category, role, tokens, nodes=nodes, frame=wire.frame(role, target.encoding))


def documents_piece(
    documents: list[Document], ids: Mapping[str, int], category: Category, target: Target
) -> Piece:
    piece = text_piece(documents_text(documents, ids), "user", category, target)
    piece.documents = documents
    return piece


def _key(message: Message, target: Target, current: bool, withheld: bool = False) -> CountKey:
    """A stored message's count key: its id, seq, stored count and the hash of a text
    content (a str caches its hash) tell it apart from any other message that might
    reuse an id outside the store; the target, and what of it is sent."""
    content = message.content
    return (
        message.id or "",
        message.seq,
        message.token_count,
        hash(content) if isinstance(content, str) else None,
        target.format,
        target.encoding,
        target.provider,
        # what of it is sent changes only a native message's nodes
        (sends_reasoning(target, current) and not withheld) or message.native is None,
    )


def sends_reasoning(target: Target, current: bool) -> bool:
    """Whether a message's same-vendor reasoning goes in: always in the current tool
    loop, earlier when the target model keeps earlier turns' reasoning."""
    return current or target.reasoning.keeps_earlier


def reasoning_left(
    message: Message, target: Target, current: bool, withheld: bool = False
) -> tuple[str, int] | None:
    """How many reasoning units of `message` its render leaves out, and why: another
    vendor's (the target format cannot carry them), an earlier turn's the target model
    would strip, or one the binding rule withholds (`withheld`: its prefix changed,
    `contextq.assembly.binding`). None when none is left out."""
    native = message.native
    if native is None:
        return None
    same = native.format == target.wire.native
    if same and sends_reasoning(target, current) and not withheld:
        return None  # all of it is sent
    units = reasoning_units(native)
    if not units:
        return None
    if not same:
        return ("other_vendor", units)
    sent = sends_reasoning(target, current)
    return ("prefix_changed", units) if sent else ("earlier_turns", units)


def _stored_applies(message: Message, target: Target) -> bool:
    """Whether the message's stored count is what its OpenAI JSON counts in the target's
    encoding (before any calibration: `contextq.calibration`)."""
    return (
        message.token_count is not None
        and target.stored_encoding == target.encoding.partition("+")[0]
        and target.wire.stored_count_applies(message)
    )


def _from_stored(message: Message, rendered: Any, target: Target) -> int:
    """The stored count as the target counts it: as is, or calibrated by the kinds of
    the message's JSON (what a recount of the sent message does)."""
    assert message.token_count is not None
    _, family = split_counter(target.encoding)
    if family is None:
        return message.token_count
    sent = rendered[0] if rendered is not None else message.to_openai()
    return calibrate(message.token_count, serialise(sent), family)


def known_cost(
    message: Message, target: Target, *, current: bool = True, withheld: bool = False
) -> int | None:
    """What `message_piece(message, target, current=current).cost` will be, when it is
    known without rendering the message (no attachments): its stored count (calibrated
    for a model counted by calibration), or a remembered one."""
    if _stored_applies(message, target):
        if target.stored_encoding == target.encoding:
            return message.token_count
        return _base_tokens(message, None, target, current)[0]
    if message.id is None:
        return None
    found = MESSAGE_COUNTS.get(_key(message, target, current, withheld))
    if found is None:
        return None
    return found[0] + target.wire.message_frame(message, target.encoding)


def _base_tokens(
    message: Message,
    rendered: list[Any] | None,
    target: Target,
    current: bool,
    withheld: bool = False,
) -> Counted:
    """The message's own tokens (no attachments) and of them its reasoning's: its stored
    count when that is exact (the stored encoding, a message whose stored count is its
    count in this format: counted at insert exactly this way; it has no reasoning),
    else remembered per message (`_key`)."""
    if (
        message.token_count is not None
        and target.stored_encoding == target.encoding
        and target.wire.stored_count_applies(message)
    ):
        return message.token_count, 0
    key = _key(message, target, current, withheld)
    if message.id is not None:
        found = MESSAGE_COUNTS.get(key)
        if found is not None:
            return found
    if _stored_applies(message, target):
        counted = _from_stored(message, rendered, target), 0  # counted at insert this way
    else:
        nodes = rendered or ()
        count = _counter(target)
        counted = sum(count(n) for n in nodes), target.wire.reasoning_tokens(nodes, count)
    if message.id is not None:
        MESSAGE_COUNTS.put(key, counted)
    return counted


def _counter(target: Target) -> Callable[[Any], int]:
    def count(node: Any) -> int:
        return _node(node, target)

    return count


def _node(node: Any, target: Target) -> int:
    wire = target.wire
    return node_tokens(
        node,
        encoding=target.encoding,
        provider=target.provider,
        media_of=wire.media_of,
        children=wire.children,
    )


def message_piece(
    message: Message,
    target: Target,
    attached: Attached | None = None,
    *,
    category: Category = "history",
    current: bool = True,
    withheld: bool = False,
) -> Piece:
    """A stored message, with its attached image/audio parts and text lines if any.
    `current`: it is in the current tool loop (its reasoning always goes in, but for
    the binding rule: `withheld`, its prefix changed)."""
    wire = target.wire
    parts = attached.parts if attached is not None else []
    extra = attached.part_tokens if attached is not None else 0
    sends = sends_reasoning(target, current) and not withheld
    nodes = wire.message_nodes(message, reasoning=sends)
    frame = wire.message_frame(message, target.encoding)
    tokens, reasoning = _base_tokens(message, nodes, target, current, withheld)
    left = reasoning_left(message, target, current, withheld)
    if not parts:
        return Piece(
            category, message.role, tokens, nodes, frame, reasoning_tokens=reasoning,
            reasoning_left=left, message=message,
        )  # fmt: skip
    with_parts, counted = wire.attach_parts(nodes, parts)
    if counted is not None:
        count = _counter(target)
        tokens, reasoning = sum(count(n) for n in counted), wire.reasoning_tokens(counted, count)
    return Piece(
        category, message.role, tokens + extra, with_parts, frame, file_tokens=extra,
        reasoning_tokens=reasoning, reasoning_left=left, message=message,
    )  # fmt: skip
