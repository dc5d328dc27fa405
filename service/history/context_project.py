"""The project slot of a context read (P, docs/projects.md), as the engine's
`ProjectContext`.

`service.projects.project_documents` chooses the documents: every ready file whole when
they all fit the room given, else the chunks that best match the query (one full-text
search), best first. The room given first is an upper bound of P's share (`project_share`
of the budget); the engine then fits P to the share of what is really left once the
fixed parts are taken, and when whole files did not fit that room it reports the room
(`Assembled.project_room`), and the read asks again for chunks within it
(`chunks_only`). A conversation whose project was deleted since gets no P.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlmodel import Session

from contextq.assembly import ContextPlan, ProjectContext, ProjectDocument, ProjectNote
from contextq.errors import NotFound
from contextq.history import Message
from contextq.history.types import content_text
from contextq.settings import Settings
from service.projects import ProjectDocuments, project_documents

log = logging.getLogger("contextq.history")


def project_query(request_query: str | None, messages: Sequence[Message], u_seq: int | None) -> str:
    """The retrieval query: the request's `query`, else the newest user message's text."""
    if request_query and request_query.strip():
        return request_query
    for message in reversed(messages):
        if message.seq == u_seq:
            return content_text(message.content)
    return ""


def upper_room(plan: ContextPlan) -> int:
    """An upper bound of P's room: its share of the budget (docs/context.md#what-is-taken-first: the
    project's documents up to `project_share` of what is left of it). Not of the hard room: the
    search fills whatever room it is given (hybrid search ranks every chunk), and when
    the whole context fits the hard room no filtering trims P back to its share."""
    f = plan.read.filter
    return int(f.project_share * max(0, min(f.budget.budget_tokens, f.budget.hard_limit_tokens)))


def load_project(
    session: Session,
    settings: Settings,
    *,
    owner_id: str,
    project_id: str | None,
    query: str,
    room: int,
    model: str | None,
    chunks_only: bool = False,
) -> ProjectContext:
    """The project's slot within `room` tokens (empty without a project)."""
    if not project_id:
        return ProjectContext()
    try:
        found = project_documents(
            session=session,
            settings=settings,
            owner_id=owner_id,
            project_id=project_id,
            query=query,
            budget_tokens=room,
            model=model,
            chunks_only=chunks_only,
        )
    except NotFound:
        log.warning("context: project %s of the conversation no longer exists", project_id)
        return ProjectContext()
    return _as_context(found)


def _as_context(found: ProjectDocuments) -> ProjectContext:
    documents = tuple(
        ProjectDocument(
            source_key=d.citation_key,
            file_id=d.file_id,
            title=d.title,
            contents=d.contents,
            metadata=d.metadata,
            chunk=d.chunk.as_dict() if d.chunk is not None else None,
        )
        for d in found.documents
    )
    notes = tuple(ProjectNote(n.file_id, n.reason, n.pending) for n in found.notes)
    return ProjectContext(found.instructions, documents, found.mode, notes)
