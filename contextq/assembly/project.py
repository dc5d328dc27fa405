"""The project slot (P, SPEC §6 and §8): the project's instructions open one user message,
then its documents as documents JSON, each with its citation id, up to the room given.

The projects issue fills `ProjectContext` (whole files when the project fits its share
of the budget, best-matching chunks otherwise); an empty context gives no message.
"""

from __future__ import annotations

from collections.abc import Mapping

from contextq.assembly.attachments import Document, documents_text
from contextq.assembly.citations import CitationMap
from contextq.assembly.inputs import ProjectContext
from contextq.assembly.pieces import Piece, Target, text_piece


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
) -> Piece | None:
    """P with as many of the project's documents, in order, as fit `room` tokens (all of
    them when `room` is None); the instructions alone when none fits."""
    documents = project_documents(project)
    ids = {d.source_key: citations.provisional(d.source_key) for d in documents}
    whole = render_project(project, documents, ids, target)
    if room is None or whole is None or whole.cost <= room:
        return whole
    chosen: list[Document] = []
    for document in documents:
        trial = render_project(project, [*chosen, document], ids, target)
        if trial is None or trial.cost > room:
            break
        chosen.append(document)
    piece = render_project(project, chosen, ids, target)
    if piece is not None and piece.cost > room:
        return None
    return piece
