"""One context being assembled: the visible history rendered as pieces, with costs.

Built once per request from what the service loaded; `layout` decides what goes in and
`context` lays it out. Every history message is rendered in the target format with its
attachments (documents above a user message, image/audio parts or text lines in it), so
a message's cost is what it will cost as sent, files included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextq.assembly.attachments import Attached, FileNote, attach, provisional_ids
from contextq.assembly.citations import CitationMap
from contextq.assembly.inputs import FileView
from contextq.assembly.pieces import documents_piece, known_cost, message_piece
from contextq.assembly.tool_results import ToolResultView, stand_in
from contextq.assembly.turn import split_turn
from contextq.assembly.wire import Piece, Target
from contextq.catalog import ModelLimits
from contextq.history.chains import unit_at
from contextq.history.types import Message


class Pieces:
    """History message i as a piece, rendered on first use (only what is sent or
    measured is rendered: a long history's older messages never are). Messages from
    `loop` on are the current tool loop's (their reasoning always goes in, but for the
    binding rule: a message in `withheld` sends none, `contextq.assembly.binding`)."""

    def __init__(
        self,
        history: Sequence[Message],
        target: Target,
        attached: dict[int, Attached],
        loop: int = 0,
    ):
        self._history = history
        self._target = target
        self._attached = attached
        self._pieces: dict[int, Piece] = {}
        self.loop = loop
        self.withheld: set[int] = set()

    def is_withheld(self, i: int, message: Message) -> bool:
        """Whether message i's reasoning is left out by the binding rule."""
        return i in self.withheld

    def withhold(self, indices: Iterable[int]) -> bool:
        """Leave the reasoning of messages `indices` out (rendered afresh); whether any
        was not left out already."""
        new = [i for i in indices if i not in self.withheld]
        for i in new:
            self.withheld.add(i)
            self._pieces.pop(i, None)
        return bool(new)

    def __getitem__(self, i: int) -> Piece:
        piece = self._pieces.get(i)
        if piece is None:
            piece = self.make(i, self._history[i])
            self._pieces[i] = piece
        return piece

    def make(self, i: int, message: Message) -> Piece:
        """`message` (message i, or what stands for it) as a piece, not remembered."""
        return message_piece(
            message,
            self._target,
            self._attached.get(i),
            current=i >= self.loop,
            withheld=self.is_withheld(i, message),
        )

    def __setitem__(self, i: int, piece: Piece) -> None:
        self._pieces[i] = piece

    def replace(self, i: int, message: Message) -> None:
        """Message i is now `message` (a cleared tool result): rendered afresh when used."""
        if isinstance(self._history, list):
            self._history[i] = message
        else:
            self._history = [*self._history[:i], message, *self._history[i + 1 :]]
        self._pieces.pop(i, None)

    def rendered(self, i: int) -> bool:
        return i in self._pieces

    def forget(self, i: int) -> None:
        """Render message i afresh on next use (its attachments changed)."""
        self._pieces.pop(i, None)


@dataclass(slots=True)
class Work:
    history: list[Message]
    target: Target
    pieces: Pieces  # one per history message, rendered on first use
    docs: dict[int, Piece]  # the documents piece above user message i
    attached: dict[int, Attached]
    u: int | None  # the newest user message (not a tool result)
    newest: tuple[int, ...]  # the newest unit (a message, or a tool call with its results)
    files: Mapping[str, FileView] = field(default_factory=dict)
    limits: ModelLimits | None = None
    citations: CitationMap = field(default_factory=CitationMap)
    notes: list[FileNote] = field(default_factory=list)
    originals: dict[int, Message] = field(default_factory=dict)  # stored, of a stand-in
    views: Mapping[str, ToolResultView] = field(default_factory=dict)  # large results
    cleared: list[str] = field(default_factory=list)  # ids of the tool results cleared
    named: set[int] = field(default_factory=set)  # tool results shown by their path
    shown_files: dict[int, tuple[Any, ...]] = field(default_factory=dict)  # attached now
    # known_cost of unrendered messages, with the message it was taken of (a message
    # replaced by its stub or preview is costed again)
    known: dict[int, tuple[Message, int]] = field(default_factory=dict)

    def cost(self, i: int) -> int:
        """What message i costs as sent, its documents included (from its stored or a
        remembered count when that is exact, without rendering it)."""
        if i not in self.attached and not self.pieces.rendered(i):
            message = self.history[i]
            cached = self.known.get(i)
            if cached is not None and cached[0] is message:
                return cached[1]
            known = known_cost(
                message,
                self.target,
                current=i >= self.pieces.loop,
                withheld=self.pieces.is_withheld(i, message),
            )
            if known is not None:
                self.known[i] = (message, known)
                return known
        docs = self.docs.get(i)
        return self.pieces[i].cost + (docs.cost if docs is not None else 0)

    def costs(self, indices: Iterable[int]) -> int:
        return sum(self.cost(i) for i in indices)

    @property
    def required(self) -> set[int]:
        """Taken first: the newest user message and the newest unit."""
        out = set(self.newest)
        if self.u is not None:
            out.add(self.u)
        return out

    def total(self) -> int:
        return sum(self.cost(i) for i in range(len(self.history)))

    def original(self, i: int) -> Message:
        """Message i as stored (not its stand-in)."""
        return self.originals.get(i, self.history[i])

    def loop_before_turn(self) -> int | None:
        """The current tool loop's first message when it starts before the newest user
        message (Anthropic's open loop: `WireFormat.loop_start`) and the target strips
        earlier turns' reasoning: once the turn is over, what those messages send changes,
        so the stable prefix (the cache breakpoint) ends before them."""
        loop = self.pieces.loop
        if self.u is None or loop >= self.u or self.target.reasoning.keeps_earlier:
            return None
        return loop

    def sent_loop(self, kept: set[int]) -> bool:
        """Where the current tool loop starts in what is sent: when the newest turn is
        not (the budget left only pinned messages), the list ends on an older loop, which
        the vendor validates as the current one; so does Anthropic's open loop when the
        model's turns between it and the newest user message are not sent (that message
        then rides with the loop's results). Its messages then send their reasoning too
        (rendered afresh). Whether the loop moved back. A list that sends the newest user
        message and whose latest assistant message is the current loop's already ends on
        that loop: the vendor validates that message's reasoning, and the older turns
        sent as the previous answer sent them keep the prefix (fuzz seed 19465;
        docs/context.md#the-cut-point-and-a-prefix-that-stays-put)."""
        order = sorted(kept)
        if not order:
            return False
        latest = max((i for i in order if self.history[i].role == "assistant"), default=-1)
        if self.u in kept and latest >= self.pieces.loop:
            return False
        sent = [self.history[i] for i in order]
        split = split_turn(sent)
        opening = split.start if split.start < len(sent) else None
        start = order[self.target.wire.loop_start(sent, opening)] if sent else 0
        if start >= self.pieces.loop:
            return False
        for i in range(start, self.pieces.loop):
            self.known.pop(i, None)
            if self.pieces.rendered(i) and not self.pieces[i].shown:
                self.pieces.forget(i)  # (a preview stays as it was cut)
        self.pieces.loop = start
        return True

    def withhold(self, indices: Iterable[int]) -> bool:
        """Leave out the reasoning of messages `indices` (the binding rule's decision);
        whether that changed anything."""
        indices = list(indices)
        for i in indices:
            self.known.pop(i, None)
        return self.pieces.withhold(indices)

    def piece_of(self, i: int, message: Message) -> Piece:
        """`message` in the place of message i (a preview of it), as a piece."""
        return self.pieces.make(i, message)

    @property
    def loop(self) -> int:
        """Where the current tool loop starts (`WireFormat.loop_start`)."""
        return self.pieces.loop


def build_work(
    history: Sequence[Message],
    *,
    u: int | None,
    target: Target,
    limits: ModelLimits,
    files: Mapping[str, FileView],
    citations: CitationMap,
    tool_views: Mapping[str, ToolResultView] | None = None,
) -> Work:
    """`history` as pieces: the files of its user messages attached now, large tool
    results as their previews (`tool_views`), the messages rendered when first used."""
    history = target.wire.prepare(history)
    large = tool_views or {}
    originals = {i: m for i, m in enumerate(history) if m.role == "tool" and str(m.id) in large}
    if originals:
        history = [
            stand_in(m, large[str(m.id)]) if i in originals else m for i, m in enumerate(history)
        ]
    newest: tuple[int, ...] = ()
    if history:
        unit = unit_at(history, len(history) - 1)
        newest = unit.members or (len(history) - 1,)
    listed = list(history)
    attached: dict[int, Attached] = {}
    pieces = Pieces(listed, target, attached, target.wire.loop_start(listed, u))
    work = Work(listed, target, pieces, {}, attached, u, newest, files, limits)
    work.citations = citations
    for i, message in enumerate(listed):
        if message.file_ids and message.role == "user":
            attach_files(work, i, message.file_ids)
    work.originals, work.views = originals, large
    work.named = set(originals)
    return work


def attach_files(work: Work, i: int, file_ids: Sequence[str], left_out: str | None = None) -> None:
    """Message i with the files among `file_ids` (its own, in order) attached: as
    documents above it, parts in it, or notes; each of its files not in `file_ids` is
    noted with the reason `left_out`."""
    assert work.limits is not None
    message = work.history[i]
    wanted = set(file_ids)
    key = (*(f for f in message.file_ids if f in wanted), left_out)
    if work.shown_files.get(i) == key:
        return
    work.shown_files[i] = key
    views = [work.files.get(f) or FileView(f, "missing") for f in message.file_ids if f in wanted]
    found = attach(views, limits=work.limits, wire=work.target.wire, encoding=work.target.encoding)
    if left_out is not None:
        noted = {n.file_id for n in found.notes}
        found.notes.extend(
            FileNote(f, left_out)
            for f in dict.fromkeys(message.file_ids)
            if f not in wanted and f not in noted
        )
    work.attached[i] = found
    work.docs.pop(i, None)
    if found.documents:
        ids = provisional_ids(found.documents, work.citations)
        work.docs[i] = documents_piece(found.documents, ids, "files", work.target)
    work.pieces.forget(i)


def includable(work: Work, i: int) -> list[str]:
    """Message i's files that would be sent (a document, an image or audio part) rather
    than only noted (not ready, or a text line naming it), in the order attached."""
    assert work.limits is not None
    out: list[str] = []
    for file_id in dict.fromkeys(work.history[i].file_ids):
        view = work.files.get(file_id) or FileView(file_id, "missing")
        wire, encoding = work.target.wire, work.target.encoding
        found = attach([view], limits=work.limits, wire=wire, encoding=encoding)
        if found.documents or (found.parts and not found.notes):
            out.append(file_id)
    return out
