"""Bound reasoning (docs/context.md#bound-reasoning): which same-vendor reasoning an answer
sends on a target that binds each reasoning block to the exact prefix it was written
after, and the state that decision carries from answer to answer. The one module that
decides; the assembly only asks it.

- *Canonical prefix*: an answer's wire fields as sent (`tools`, the system field, the
  list) with every reasoning unit (Anthropic `thinking`/`redacted_thinking` blocks,
  Responses `reasoning` items, Gemini thought parts and `thoughtSignature` keys) and
  every `cache_control` key removed, each node serialised deterministically (sorted
  keys, compact JSON) with the role it goes in. A *fingerprint* is the sha256 of that
  stream, computed incrementally over the pieces in order (O(kept) per read): the
  pieces a format lifts out of the list (the system field) first, then the tools, then
  the list. Pieces map to the wire as a function of that stream (a format's merging of
  consecutive turns, its tool-results-first order, its opening turn): equal streams are
  equal wire prefixes, so a block sent after a matching fingerprint is valid.
- *Binding*: a row carrying same-vendor reasoning is bound, at the first read that sees
  it, to the fingerprint of the newest answer stored for the conversation and model (in
  this format) whose last message's seq is below the row's: the answer the model read
  when it wrote that turn. None stored: to its prefix in this read.
- *Decision*: in order, each such row past the watermark is sent only if the canonical
  prefix before it in this answer has its bound fingerprint. The first row that fails,
  and every later row bound before this read, are left out (`prefix_changed`); a row
  newly bound passes on its own fingerprint. The watermark moves to the newest seq left
  out, and every row at or below it is left out from then on: a block once left out is
  never sent again, and compared with the previous answer what leaves is a run from the
  end (or everything), never one from the middle.
- *Pins* (append-only tool loops): within a turn, the date line and the system prompt's
  citation section stay as the turn's first answer sent them, and each reminder stays
  after the message it was first sent after (a reminder whose text changes is added at
  the end, the old one stays).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from contextq.assembly.binding_state import Answer, BindState, Pins
from contextq.assembly.wire import Piece, Target
from contextq.history.native import reasoning_units
from contextq.history.types import Message
from contextq.lru import LRU

FINGERPRINT_CHARS = 32  # of the sha256's hex: 128 bits
MAX_ANSWERS = 8  # answers' fingerprints kept per format (a row binds to one at its first read)

# keys and node types that are not part of the canonical prefix
_DROPPED_KEYS = frozenset({"cache_control", "thoughtSignature", "thought_signature"})
_REASONING_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})


def applies(target: Target) -> bool:
    """Whether `target` binds its reasoning (`reasoning_rules`) in a format that sends
    a vendor's reasoning back at all."""
    return target.reasoning.binds and target.wire.native is not None


# ---------------------------------------------------------------- canonical form


def canonical_node(node: Any) -> Any | None:
    """A node without reasoning and cache marks (None: the node is reasoning)."""
    if not isinstance(node, dict):
        return node
    if node.get("type") in _REASONING_TYPES or node.get("thought") is True:
        return None
    if _DROPPED_KEYS.isdisjoint(node):
        return node
    return {k: v for k, v in node.items() if k not in _DROPPED_KEYS}


def _digest(role: str, nodes: Iterable[Any]) -> bytes:
    kept = [c for c in (canonical_node(n) for n in nodes) if c is not None]
    if not kept:
        return b""
    return orjson.dumps([role, kept], option=orjson.OPT_SORT_KEYS) + b"\n"


# a stored message's canonical bytes, per format: a stored message never changes (its
# stub or preview is another Message); the entry holds the message it was made of
# (and its reasoning units in the format's vendor's payload)
DIGESTS: LRU[tuple[str, int, str], tuple[Message, bytes, int]] = LRU(200_000)


def _known(slot: Slot, target: Target) -> tuple[bytes, int]:
    """A slot's canonical bytes and its same-vendor reasoning units, remembered for a
    stored message rendered alone."""
    piece, message = slot.piece, slot.piece.message
    if not slot.plain or message is None or message.id is None:
        return _digest(_role(piece), piece.nodes), _units(message, target)
    key = (str(message.id), message.seq, target.format)
    found = DIGESTS.get(key)
    if found is not None and found[0] is message:
        return found[1], found[2]
    made = _digest(_role(piece), piece.nodes), _units(message, target)
    DIGESTS.put(key, (message, *made))
    return made


def _units(message: Message | None, target: Target) -> int:
    row = message.native if message is not None else None
    if row is None or row.format != target.wire.native:
        return 0
    return reasoning_units(row)


def _role(piece: Piece) -> str:
    return "user" if piece.role == "tool" else piece.role


def _tools_bytes(tools: Sequence[Any]) -> bytes:
    canonical = [canonical_node(t) for t in tools]
    return orjson.dumps(["tools", canonical], option=orjson.OPT_SORT_KEYS) + b"\n"


# ---------------------------------------------------------------- the decision


@dataclass(slots=True)
class Slot:
    """A piece of the answer in order, and the history index it renders (None: a
    generated part)."""

    piece: Piece
    index: int | None
    plain: bool = False  # a stored message rendered alone (no attachments): its bytes kept


@dataclass(slots=True)
class Decision:
    withheld: set[int]  # history indices whose reasoning this answer leaves out
    newly: int  # rows left out by this read (their units counted in `units_newly`)
    units_newly: int
    state: BindState  # the state to carry
    fingerprint: str
    head: str
    last_seq: int | None = None  # of the answer's last message


def decide(
    slots: Sequence[Slot],
    *,
    tools: Sequence[Any],
    target: Target,
    state: BindState,
    lifted: Sequence[bool],
    cut_seq: int | None = None,
    pins: Pins | None = None,
    newest_seq: int | None = None,
) -> Decision:
    """Which rows' reasoning this answer leaves out (module docstring), and the state to
    carry. `lifted[k]`: slot k goes in the format's system field (out of the list)."""
    running = hashlib.sha256(_tools_bytes(tools))
    for slot, out in zip(slots, lifted, strict=True):
        if out:
            running.update(_known(slot, target)[0])
    head = running.hexdigest()[:FINGERPRINT_CHARS]
    walk = _Walk(state, target)
    for slot, out in zip(slots, lifted, strict=True):
        digest, units = _known(slot, target)
        walk.row(slot, units, running)
        if not out:
            running.update(digest)
    watermark = walk.close()
    newly = [s.piece.message for s in slots if s.index in walk.withheld and s.piece.message]
    newly = [m for m in newly if state.watermark is None or m.seq > state.watermark]
    fingerprint = running.hexdigest()[:FINGERPRINT_CHARS]
    # an answer is the one the model read for every row appended after the newest
    # message of the history it was made from (sent or not: a pinned-only answer)
    read_through = newest_seq if newest_seq is not None else walk.last_seq
    answers = _with_answer(state.answers, read_through, target.format, fingerprint, head)
    floor = max(watermark or 0, cut_seq or 0)
    carried = {s: f for s, f in state.bound.items() if s > floor}
    carried.update(walk.bound)
    for seq in withheld_seqs(slots, walk.withheld):
        carried.pop(seq, None)
    return Decision(
        walk.withheld,
        len(newly),
        sum(reasoning_units(m.native) for m in newly),
        BindState(watermark, answers, carried, pins, state.notice),
        fingerprint,
        head,
        walk.last_seq,
    )


class _Walk:
    """The rows of an answer in order, each checked against its binding."""

    def __init__(self, state: BindState, target: Target) -> None:
        self.state = state
        self.format = target.format
        self.native = target.wire.native
        self.bound: dict[int, str] = {}
        self.withheld: set[int] = set()
        self.failed = False
        self.newest_dropped: int | None = None
        self.last_seq: int | None = None
        self.kept: list[tuple[int, int]] = []  # (seq, index) of the rows sent

    def row(self, slot: Slot, units: int, running: Any) -> None:
        """Slot `slot` with `units` same-vendor reasoning units, the hash of the
        canonical prefix before it being `running`."""
        message = slot.piece.message
        if message is None or slot.index is None:
            return
        seq = message.seq
        self.last_seq = seq if self.last_seq is None else max(self.last_seq, seq)
        if not units:
            return
        prefix = running.hexdigest()[:FINGERPRINT_CHARS]
        watermark = self.state.watermark
        if watermark is not None and seq <= watermark:
            self.withheld.add(slot.index)
            return
        was = self.state.bound.get(seq)
        fp = was if was is not None else _written_after(self.state.answers, seq, self.format)
        fp = fp if fp is not None else prefix
        if fp == prefix and (was is None or not self.failed):
            self.bound[seq] = fp
            self.kept.append((seq, slot.index))
            return
        self.failed = True
        self.withheld.add(slot.index)
        self.newest_dropped = max(seq, self.newest_dropped or seq)

    def close(self) -> int | None:
        """Nothing sent below a block left out (no gap); the new watermark."""
        dropped, watermark = self.newest_dropped, self.state.watermark
        if dropped is None:
            return watermark
        for seq, index in self.kept:
            if seq < dropped:
                self.withheld.add(index)
                self.bound.pop(seq, None)
        return max(dropped, watermark or dropped)


def withheld_seqs(slots: Sequence[Slot], withheld: set[int]) -> list[int]:
    return [
        s.piece.message.seq for s in slots if s.index in withheld and s.piece.message is not None
    ]


def _written_after(answers: Sequence[Answer], seq: int, fmt: str) -> str | None:
    """The fingerprint of the newest answer (in `fmt`) made from a history whose newest
    message is below `seq`: the answer the model read when it wrote row `seq`."""
    for answer in reversed(answers):
        if answer.format == fmt and answer.last_seq < seq:
            return answer.fingerprint
    return None


def _with_answer(
    answers: tuple[Answer, ...], last_seq: int | None, fmt: str, fingerprint: str, head: str
) -> tuple[Answer, ...]:
    """The stored answers with this one (unless it is the newest already)."""
    if last_seq is None:
        return answers
    answer = Answer(last_seq, fmt, fingerprint, head)
    mine = [a for a in answers if a.format == fmt]
    if mine and mine[-1] == answer:
        return answers
    # the newest `MAX_ANSWERS` of each format (reads in another format never push out
    # the answers this format's rows bind to)
    keep = {id(a) for a in mine[-(MAX_ANSWERS - 1) :]} if MAX_ANSWERS > 1 else set()
    kept = tuple(a for a in answers if a.format != fmt or id(a) in keep)
    return (*kept, answer)


def newest_head(state: BindState, fmt: str) -> str | None:
    """The head fingerprint (tools and system field) of the newest stored answer."""
    for answer in reversed(state.answers):
        if answer.format == fmt:
            return answer.head
    return None


# ---------------------------------------------------------------- pins


def pins_for(
    state: BindState,
    *,
    turn_seq: int,
    now: str,
    searched: bool,
    reminder: str | None,
    last_seq: int,
    ended: bool = False,
) -> tuple[Pins, bool]:
    """The pins of this answer: the carried ones while the turn is the same (a reminder
    whose text changed added after the newest message, unless the turn `ended` with a
    final answer), else new ones; and whether the answer is inside a turn already
    answered (a tool loop's later step)."""
    carried = state.pins
    if carried is None or carried.turn_seq != turn_seq:
        first: tuple[tuple[int, str], ...] = ((last_seq, reminder),) if reminder else ()
        return Pins(turn_seq, now, searched, first), False
    reminders = carried.reminders
    if reminder and not ended and (not reminders or reminders[-1][1] != reminder):
        reminders = (*reminders, (last_seq, reminder))
    return Pins(turn_seq, carried.now, carried.searched, reminders), True


def cause(
    *,
    cut_moved: bool,
    line_moved: bool,
    head_changed: bool,
    new_turn: bool,
) -> str:
    """Why reasoning was left out, in a user's words."""
    if head_changed:
        return "the system prompt or tools changed"
    if cut_moved:
        return "the cut moved"
    if line_moved:
        return "the clearing line moved"
    if new_turn:
        return "a new user turn moved the parts before it (custom agent prompt, reminders)"
    return "an earlier part of the context changed"


def warning(reason: str, steps: int) -> str:
    noun = "step" if steps == 1 else "steps"
    return (
        f"{reason}: thinking of {steps} earlier {noun} is left out; the model will "
        "continue without it"
    )


__all__ = ["Answer", "BindState", "Decision", "Pins", "Slot", "applies", "decide"]
