"""The project slot (P, docs/projects.md): the project's instructions open one user message,
then its documents as documents JSON, each with its citation id, up to the room given.

The service fills `ProjectContext` (`service.history.context_project`: whole files when
the project fits its share of the budget, best-matching chunks otherwise); an empty
context gives no message.
"""

from __future__ import annotations

from collections.abc import Mapping

from contextq.assembly.attachments import Document, documents_text
from contextq.assembly.citations import CitationMap
from contextq.assembly.inputs import ProjectContext
from contextq.assembly.pieces import text_piece
from contextq.assembly.wire import Piece, Target


def project_documents(project: ProjectContext) -> list[Document]:
    return [
        Document(
            source_key=d.source_key,
            file_id=d.file_id,
            title=d.title,
            contents=d.contents,
            metadata=d.metadata,
            source="project",
            chunk=d.chunk,
        )
        for d in project.documents
    ]


def render_project(
    project: ProjectContext, documents: list[Document], ids: Mapping[str, int], target: Target
) -> Piece | None:
    """The P message for `documents` (None when there is nothing to say)."""
    if not documents and not (project.instructions or "").strip():
        return None
    blocks = []
    if project.instructions and project.instructions.strip():
        blocks.append(project.instructions.strip())
    if documents:
        blocks.append(documents_text(documents, ids))
    piece = text_piece("\n\n".join(blocks), "user", "project", target)
    piece.documents = documents
    return piece


def project_piece(
    project: ProjectContext, *, room: int | None, citations: CitationMap, target: Target
) -> tuple[Piece | None, bool]:
    """P within `room` tokens (everything when `room` is None), and whether it fell short
    of the whole project (mode "whole": then only the instructions are shown, and the
    service asks again with chunks for that room). In mode "chunks" the longest prefix of
    the best-first chunks that fits (found by bisection: a handful of renders)."""
    documents = project_documents(project)
    ids = {d.source_key: citations.provisional(d.source_key) for d in documents}
    whole = render_project(project, documents, ids, target)
    if room is None or whole is None or whole.cost <= room:
        return whole, False
    short = project.mode == "whole" and bool(documents)
    fits, low, high = 0, 1, 0 if short else len(documents)
    while low <= high:
        middle = (low + high) // 2
        trial = render_project(project, documents[:middle], ids, target)
        if trial is not None and trial.cost <= room:
            fits, low = middle, middle + 1
        else:
            high = middle - 1
    piece = render_project(project, documents[:fits], ids, target)
    if piece is not None and piece.cost > room:
        return None, short
    return piece, short
