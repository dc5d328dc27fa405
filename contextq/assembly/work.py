"""One context being assembled: the visible history rendered as pieces, with costs.

Built once per request from what the service loaded; `layout` decides what goes in and
`context` lays it out. Every history message is rendered in the target format with its
attachments (documents above a user message, image/audio parts or text lines in it), so
a message's cost is what it will cost as sent, files included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from contextq.assembly.attachments import Attached, FileNote, attach, provisional_ids
from contextq.assembly.citations import CitationMap
from contextq.assembly.inputs import FileView
from contextq.assembly.pieces import Piece, Target, documents_piece, known_cost, message_piece
from contextq.assembly.tool_results import (
    ToolResultView,
    result_path,
    stand_in,
    stub,
    to_clear,
)
from contextq.catalog import ModelLimits
from contextq.history.chains import unit_at
from contextq.history.types import Message, content_text


class Pieces:
    """History message i as a piece, rendered on first use (only what is sent or
    measured is rendered: a long history's older messages never are)."""

    def __init__(self, history: Sequence[Message], target: Target, attached: dict[int, Attached]):
        self._history = history
        self._target = target
        self._attached = attached
        self._pieces: dict[int, Piece] = {}

    def __getitem__(self, i: int) -> Piece:
        piece = self._pieces.get(i)
        if piece is None:
            piece = message_piece(self._history[i], self._target, self._attached.get(i))
            self._pieces[i] = piece
        return piece

    def __setitem__(self, i: int, piece: Piece) -> None:
        self._pieces[i] = piece

    def replace(self, i: int, message: Message) -> None:
        """Message i is now `message` (a cleared tool result): rendered afresh."""
        if isinstance(self._history, list):
            self._history[i] = message
        else:
            self._history = [*self._history[:i], message, *self._history[i + 1 :]]
        self._pieces[i] = message_piece(message, self._target, self._attached.get(i))

    def rendered(self, i: int) -> bool:
        return i in self._pieces


@dataclass(slots=True)
class Work:
    history: list[Message]
    target: Target
    pieces: Pieces  # one per history message, rendered on first use
    docs: dict[int, Piece]  # the documents piece above user message i
    attached: dict[int, Attached]
    u: int | None  # the newest user message (not a tool result)
    newest: tuple[int, ...]  # the newest unit (a message, or a tool call with its results)
    notes: list[FileNote] = field(default_factory=list)
    originals: dict[int, Message] = field(default_factory=dict)  # stored, of a stand-in
    views: Mapping[str, ToolResultView] = field(default_factory=dict)  # large results
    cleared: list[str] = field(default_factory=list)  # ids of the tool results cleared

    def cost(self, i: int) -> int:
        """What message i costs as sent, its documents included (from its stored or a
        remembered count when that is exact, without rendering it)."""
        if i not in self.attached and not self.pieces.rendered(i):
            known = known_cost(self.history[i], self.target)
            if known is not None:
                return known
        docs = self.docs.get(i)
        return self.pieces[i].cost + (docs.cost if docs is not None else 0)

    @property
    def required(self) -> set[int]:
        """Taken first: the newest user message and the newest unit."""
        out = set(self.newest)
        if self.u is not None:
            out.add(self.u)
        return out

    def total(self) -> int:
        return sum(self.cost(i) for i in range(len(self.history)))


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
    large = tool_views or {}
    originals = {i: m for i, m in enumerate(history) if m.role == "tool" and str(m.id) in large}
    if originals:
        history = [
            stand_in(m, large[str(m.id)]) if i in originals else m for i, m in enumerate(history)
        ]
    docs: dict[int, Piece] = {}
    attached: dict[int, Attached] = {}
    for i, message in enumerate(history):
        if message.file_ids and message.role == "user":
            views = [files.get(fid) or FileView(fid, "missing") for fid in message.file_ids]
            found = attach(views, limits=limits, fmt=target.format, encoding=target.encoding)
            attached[i] = found
            if found.documents:
                ids = provisional_ids(found.documents, citations)
                docs[i] = documents_piece(found.documents, ids, "files", target)
    newest: tuple[int, ...] = ()
    if history:
        unit = unit_at(history, len(history) - 1)
        newest = unit.members or (len(history) - 1,)
    listed = list(history)
    pieces = Pieces(listed, target, attached)
    work = Work(listed, target, pieces, docs, attached, u, newest)
    work.originals, work.views = originals, large
    return work


def _stub_for(work: Work, i: int) -> Message:
    original = work.originals.get(i, work.history[i])
    view = work.views.get(str(original.id))
    size = (
        view.size_bytes
        if view is not None
        else len(content_text(original.content).encode("utf-8", "surrogatepass"))
    )
    path = view.path if view is not None else result_path(original)
    return stub(work.history[i], tokens=original.token_count, size_bytes=size, path=path)


def _candidates(work: Work, *, keep: int, protected: set[int], step: int) -> list[int]:
    done = set(work.cleared)
    found = to_clear(work.history, keep=keep, protected=protected, step=step)
    return [i for i in found if str(work.history[i].id) not in done]


def clear_tool_results(work: Work, *, keep: int, protected: set[int], step: int) -> None:
    """Old tool results as one-line stubs (`tool_results.to_clear`), their ids in
    `work.cleared`."""
    for i in _candidates(work, keep=keep, protected=protected, step=step):
        cleared = _stub_for(work, i)
        work.cleared.append(str(work.history[i].id))
        work.history[i] = cleared
        work.pieces.replace(i, cleared)


def clearing_saves(work: Work, *, keep: int, protected: set[int]) -> int:
    """The tokens clearing every result but the newest `keep` would save now."""
    saved = 0
    for i in _candidates(work, keep=keep, protected=protected, step=1):
        saved += work.cost(i) - message_piece(_stub_for(work, i), work.target).cost
    return saved


def without_files(work: Work, i: int, reason: str) -> None:
    """Leave out message i's documents and image/audio parts (listed with `reason`)."""
    found = work.attached.get(i)
    if found is None:
        return
    dropped = [d.file_id for d in found.documents]
    dropped += [n for n in _part_files(work, i)]
    if i in work.docs:
        del work.docs[i]
    stripped = Attached(notes=found.notes)
    work.attached[i] = stripped
    work.pieces[i] = message_piece(work.history[i], work.target, stripped)
    work.notes.extend(FileNote(file_id, reason) for file_id in dict.fromkeys(dropped))


def _part_files(work: Work, i: int) -> list[str]:
    """Files shown as parts of message i (images, audio), not already noted."""
    message = work.history[i]
    found = work.attached[i]
    noted = {n.file_id for n in found.notes}
    documents = {d.file_id for d in found.documents}
    return [f for f in message.file_ids if f not in noted and f not in documents]
