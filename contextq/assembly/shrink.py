"""A history message shrunk to a preview that fits a given room
(docs/history.md#a-summary-for-a-smaller-model, docs/workspaces.md#large-tool-results).

A tool result keeps the line naming its workspace path and size (its body shrinks,
down to nothing: then the line alone) and is listed in `Work.named`, so the service
makes sure the path exists before it answers. Any other message keeps its head and
tail with a note naming the message id (the whole is in the stored history). The
preview is the largest whose honest count fits (`preview.fit_preview`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from contextq.assembly.preview import cut_middle, fit_preview
from contextq.assembly.tool_results import (
    preview_line,
    result_path,
    result_size,
    shown,
    with_line,
)
from contextq.assembly.wire import Piece
from contextq.assembly.work import Work
from contextq.history.types import content_text
from contextq.tokens import count_tokens


@dataclass(frozen=True, slots=True)
class _Source:
    body: str  # the text whose middle may be cut
    content: Callable[[str], str]  # the message's content from a cut of the body
    whole: str  # where the whole is, for the note in the middle
    tool: bool


def _source(work: Work, i: int) -> _Source:
    original = work.original(i)
    if original.role == "tool":
        view = work.views.get(str(original.id))
        if view is not None:
            body, size, path = view.preview, view.size_bytes, view.path
        else:
            body, size, path = (
                content_text(original.content),
                result_size(original),
                result_path(original),
            )
        tokens = original.token_count

        def tool_content(cut: str) -> str:
            return with_line(cut, preview_line(tokens, size, path, body=bool(cut.strip())))

        return _Source(body, tool_content, "", True)
    whole = f"the whole message is in this conversation's history as message {original.id}"

    def content(cut: str) -> str:
        if cut:
            return cut
        size = f"{original.token_count:,} tokens" if original.token_count is not None else "it"
        return f"[This message ({size}) is not shown here for lack of room; {whole}.]"

    return _Source(content_text(original.content), content, whole, False)


def _builder(work: Work, i: int, source: _Source) -> Callable[[int], Piece]:
    original = work.original(i)
    encoding = work.target.encoding

    def build(body_tokens: int) -> Piece:
        cut = cut_middle(source.body, body_tokens, encoding, whole=source.whole)
        shown_message = replace(shown(original, source.content(cut)), id=None)
        piece = work.piece_of(i, shown_message)
        piece.message, piece.shown = original, True
        return piece

    return build


def min_cost(work: Work, i: int) -> int:
    """What message i costs as its smallest preview (its documents included)."""
    docs = work.docs.get(i)
    bare = _builder(work, i, _source(work, i))(0)
    return min(work.cost(i), bare.cost + (docs.cost if docs is not None else 0))


def shrink(work: Work, i: int, target: int) -> bool:
    """Message i as the largest preview costing at most `target` (its documents
    included); whether it changed. Never larger than it was."""
    current = work.cost(i)
    if current <= target:
        return False
    docs = work.docs.get(i)
    around = docs.cost if docs is not None else 0
    source = _source(work, i)
    fitted = fit_preview(
        _builder(work, i, source),
        lambda p: p.cost,
        body_total=count_tokens(source.body, work.target.encoding),
        target=target - around,
    )
    if fitted.cost + around >= current:
        return False
    work.pieces[i] = fitted.value
    if source.tool:
        work.named.add(i)
    return True


def results_first(work: Work, indices: Iterable[int]) -> list[int]:
    """The order in which messages give way: tool results newest first, then the others
    largest first."""
    history = work.history
    chosen = sorted(indices)
    results = [i for i in reversed(chosen) if history[i].role == "tool"]
    others = sorted((i for i in chosen if history[i].role != "tool"), key=work.cost, reverse=True)
    return results + others


def shrink_in_order(work: Work, order: Sequence[int], excess: int) -> list[tuple[int, int]]:
    """Shrink the messages of `order`, one after another, until `excess` tokens are gone;
    (index, cost before) of each that shrank."""
    shrunk: list[tuple[int, int]] = []
    for i in order:
        if excess <= 0:
            break
        before = work.cost(i)
        if shrink(work, i, before - excess):
            excess -= before - work.cost(i)
            shrunk.append((i, before))
    return shrunk
