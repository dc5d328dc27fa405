"""The projects use cases (docs/projects.md): create, list, read with counts, change, delete (with
their files), move a file in or out, search, and the project's documents for a context.

Another owner's project is exactly as missing as no project (`NotFound`, 404), wherever
it is named: the routes of `api/routes/projects.py`, an upload's `project_id`
(`service.files.accept_upload`), `PATCH /v1/files/{id}`.

`project_documents` is what the context's P slot calls (docs/projects.md): given the owner, the
project, the query and the project's share of the budget, the documents to include —
every ready file whole when they all fit, else the best-matching chunks up to the share.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlmodel import Session

from contextq.catalog import resolve_model
from contextq.errors import NotFound, ValidationFailed
from contextq.retrieval import documents as docs
from contextq.retrieval.chunking import ChunkerOptions, chunk_set_key
from contextq.settings import Settings
from service import enqueue
from service.file_texts import TEXTS
from service.files.uploads import PROJECT_NOT_FOUND, delete_rows, get_file
from store import projects_queries as pq
from store.chunks_queries import file_chunk_set
from store.project_tables import Project
from store.search import MODES, ChunkHit, Mode, search_chunks
from store.tables import File, FileStatus, utcnow

NOT_FOUND = PROJECT_NOT_FOUND
MAX_NAME_CHARS = 200
MAX_INSTRUCTIONS_CHARS = 100_000
MAX_SEARCH_LIMIT = 100
PENDING = (FileStatus.UPLOADED, FileStatus.PROCESSING)


@dataclass(frozen=True)
class ProjectView:
    """A project with its counts (docs/projects.md: file_count, ready_count, token_count,
    chunk_count)."""

    project: Project
    stats: pq.ProjectStats


def require_project(session: Session, *, owner_id: str, project_id: str) -> Project:
    """The owner's project; another owner's is as missing as none (NotFound)."""
    row = pq.get_owned(session, owner_id=owner_id, project_id=project_id)
    if row is None:
        raise NotFound(NOT_FOUND)
    return row


def _name(value: Any) -> str:
    name = value.strip() if isinstance(value, str) else ""
    if not name or len(name) > MAX_NAME_CHARS:
        raise ValidationFailed(f"`name` must be 1 to {MAX_NAME_CHARS} characters", field="name")
    if any(unicodedata.category(c)[0] == "C" for c in name):
        raise ValidationFailed("`name` must not contain control characters", field="name")
    return name


def _instructions(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_INSTRUCTIONS_CHARS:
        raise ValidationFailed(
            f"`instructions` must be text of at most {MAX_INSTRUCTIONS_CHARS} characters",
            field="instructions",
        )
    if "\x00" in value:
        raise ValidationFailed("`instructions` must not contain NUL", field="instructions")
    return value if value.strip() else None


def _view(session: Session, project: Project) -> ProjectView:
    counts = pq.stats(session, owner_id=project.owner_id, project_ids=[project.id])
    return ProjectView(project, counts[project.id])


def create_project(
    *, session: Session, owner_id: str, name: str, instructions: str | None = None
) -> ProjectView:
    now = utcnow()
    project = Project(
        owner_id=owner_id,
        name=_name(name),
        instructions=_instructions(instructions),
        created_at=now,
        updated_at=now,
    )
    session.add(project)
    session.flush()
    return ProjectView(project, pq.ProjectStats())


def get_project(*, session: Session, owner_id: str, project_id: str) -> ProjectView:
    return _view(session, require_project(session, owner_id=owner_id, project_id=project_id))


def list_projects(
    *, session: Session, owner_id: str, limit: int, cursor: str | None = None
) -> tuple[list[ProjectView], str | None]:
    """A page of the owner's projects with their counts, newest first."""
    try:
        after = pq.decode_cursor(cursor) if cursor else None
    except ValueError:
        raise ValidationFailed("invalid cursor: pass next_cursor from the previous page") from None
    rows, next_cursor = pq.list_owned(session, owner_id=owner_id, limit=limit, after=after)
    counts = pq.stats(session, owner_id=owner_id, project_ids=[r.id for r in rows])
    return [ProjectView(r, counts[r.id]) for r in rows], next_cursor


def update_project(
    *, session: Session, owner_id: str, project_id: str, changes: Mapping[str, Any]
) -> ProjectView:
    """Set the given fields (`name`, `instructions`; `instructions: null` clears it)."""
    project = require_project(session, owner_id=owner_id, project_id=project_id)
    unknown = set(changes) - {"name", "instructions"}
    if unknown:
        raise ValidationFailed(f"unknown field {sorted(unknown)[0]!r}", field=sorted(unknown)[0])
    if "name" in changes:
        project.name = _name(changes["name"])
    if "instructions" in changes:
        project.instructions = _instructions(changes["instructions"])
    project.updated_at = utcnow()
    session.add(project)
    session.flush()
    return _view(session, project)


def delete_project(*, session: Session, settings: Settings, owner_id: str, project_id: str) -> int:
    """Delete the project and its files (their processed texts, chunks and blobs as
    `DELETE /v1/files/{id}` does). Returns how many files were deleted."""
    project = require_project(session, owner_id=owner_id, project_id=project_id)
    rows = pq.project_files(session, owner_id=owner_id, project_id=project.id)
    delete_rows(session=session, settings=settings, rows=rows)
    session.delete(project)
    session.flush()
    return len(rows)


def move_file(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    file_id: str,
    project_id: str | None,
) -> File:
    """Move the owner's file into the owner's project (or out, with None). A ready file
    moved in that is not indexed yet gets an `index_file` task after the commit; a file
    still processing is indexed by its processing (which reads its project once ready)."""
    row = get_file(session=session, owner_id=owner_id, file_id=file_id)
    if project_id is not None:
        require_project(session, owner_id=owner_id, project_id=project_id)
    status = pq.set_file_project(session, file_id=row.id, project_id=project_id)
    session.refresh(row)
    if (
        project_id is not None
        and status == FileStatus.READY
        and not _indexed(session, row, settings)
    ):
        enqueue.after_commit(session, enqueue.index_file, row.id, settings=settings)
    return row


def _indexed(session: Session, row: File, settings: Settings) -> bool:
    """Linked to the chunks of its bytes by the current chunker configuration."""
    current = file_chunk_set(session, file_id=row.id)
    key = chunk_set_key(row.sha256, ChunkerOptions.from_settings(settings))
    return current is not None and current.key == key


def search_project(
    *,
    session: Session,
    owner_id: str,
    project_id: str,
    query: str,
    limit: int = 10,
    mode: Mode = "hybrid",
) -> list[ChunkHit]:
    """The owner's project's chunks that best match `query`, best first (maybe none):
    `hybrid` fuses the full-text and the dense ranking, `bm25` and `dense` are each alone."""
    require_project(session, owner_id=owner_id, project_id=project_id)
    if mode not in MODES:
        raise ValidationFailed(f"`mode` must be one of {', '.join(MODES)}", field="mode")
    limit = max(1, min(limit, MAX_SEARCH_LIMIT))
    return search_chunks(
        session, owner_id=owner_id, project_id=project_id, query=query, limit=limit, mode=mode
    )


# --- the project's documents for a context (the P slot, docs/projects.md) -------------------


@dataclass(frozen=True)
class FileNote:
    file_id: str
    reason: str
    pending: bool = False  # still processing or being indexed: it joins later


@dataclass(frozen=True)
class ProjectDocuments:
    """What the P slot includes. `token_count` bounds the P message's text
    (`message_text`, citation ids of up to 6 digits); it is within the budget unless the
    instructions alone are not (then `documents` is empty)."""

    project_id: str
    instructions: str | None
    mode: Literal["whole", "chunks"]
    documents: tuple[docs.ProjectDocument, ...]
    token_count: int
    pending_file_ids: tuple[str, ...] = ()
    failed_file_ids: tuple[str, ...] = ()
    notes: tuple[FileNote, ...] = field(default=())

    def message_text(self, citation_ids: list[int]) -> str:
        """The P message: the instructions, then `{"documents": [...]}` with these ids."""
        return docs.project_message_text(self.instructions, self.documents, citation_ids)


# a cl100k count (how chunks and files are counted when stored) over this many times the
# model's own count is not expected: below it, a candidate is counted exactly
STORED_COUNT_SLACK = 1.25
# how many ranked chunks are looked at per chunk the share could hold at most
CANDIDATES_PER_SLOT = 2
MAX_CANDIDATES = 400


def project_documents(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    project_id: str,
    query: str | None,
    budget_tokens: int,
    model: str | None = None,
    chunks_only: bool = False,
) -> ProjectDocuments:
    """The project's documents within `budget_tokens` (the project's share of what is left
    of the context budget), counted in `model`'s encoding: every ready file whole when
    all of them fit, else the chunks that best match `query`, best first, as many as fit.
    Files still processing are listed as pending, failed ones as failed, each with a note;
    so is a ready file that cannot be searched when chunks are chosen. The cost grows
    with what is kept, not with the project's size: the whole-file check reads the stored
    counts first, and a chunk is counted exactly only when its stored count could fit.
    `chunks_only`: the best chunks even when the whole files would fit `budget_tokens`
    (the context found they did not fit the room it had in the end)."""
    project = require_project(session, owner_id=owner_id, project_id=project_id)
    encoding = resolve_model(model, settings).counting.counter  # calibrated if closed
    files = pq.project_files(session, owner_id=owner_id, project_id=project.id)
    ready = [f for f in files if f.status == FileStatus.READY]
    frame = docs.frame_tokens(project.instructions, encoding)
    room = budget_tokens - frame
    whole = None if chunks_only else _whole_files(session, ready, room, encoding)
    notes = _status_notes(files)
    if whole is not None:
        mode: Literal["whole", "chunks"] = "whole"
        kept = whole
    else:
        mode = "chunks"
        kept, unsearchable = _best_chunks(session, settings, project, ready, query, room, encoding)
        notes += unsearchable
    return ProjectDocuments(
        project_id=project.id,
        instructions=project.instructions,
        mode=mode,
        documents=tuple(kept),
        token_count=frame + sum(d.token_count for d in kept),
        pending_file_ids=tuple(f.id for f in files if f.status in PENDING),
        failed_file_ids=tuple(f.id for f in files if f.status == FileStatus.FAILED),
        notes=tuple(notes),
    )


def _status_notes(files: list[File]) -> list[FileNote]:
    notes = []
    for f in files:
        if f.status in PENDING:
            reason = f"{f.filename} is still {f.status}; it joins the project once it is ready"
            notes.append(FileNote(f.id, reason, pending=True))
        elif f.status == FileStatus.FAILED:
            notes.append(FileNote(f.id, f"{f.filename} failed to process: {f.error}"))
    return notes


def _whole_files(
    session: Session, ready: list[File], room: int, encoding: str
) -> list[docs.ProjectDocument] | None:
    """Every ready file as a whole document, oldest first, or None when they do not all
    fit `room` (decided from the stored counts when they are far over)."""
    if room < 0:
        return None if ready else []
    stored = sum(f.processed_token_count or 0 for f in ready)
    if stored > room * STORED_COUNT_SLACK:
        return None
    texts = _file_texts(session, [f.id for f in ready])
    whole = []
    for f in ready:
        text = docs.FileText(
            f.id, f.filename, f.category, texts.get(f.id, ""), f.meta, f.truncation
        )
        whole.append(docs.whole_file_document(text, encoding=encoding))
    return whole if sum(d.token_count for d in whole) <= room else None


def _file_texts(session: Session, file_ids: list[str]) -> dict[str, str]:
    """Processed texts (immutable once a file is ready), through the context's cache."""
    found = {i: t for i in file_ids if (t := TEXTS.get(i)) is not None}
    for file_id, text in pq.file_texts(
        session, file_ids=[i for i in file_ids if i not in found]
    ).items():
        TEXTS.put(file_id, text)
        found[file_id] = text
    return found


def _best_chunks(  # noqa: PLR0917 - the pieces of one decision
    session: Session,
    settings: Settings,
    project: Project,
    ready: list[File],
    query: str | None,
    room: int,
    encoding: str,
) -> tuple[list[docs.ProjectDocument], list[FileNote]]:
    """The best-matching chunks that fit `room`, and notes on ready files search cannot
    see (no text to index, indexing failed, or indexing still to come)."""
    in_file = pq.chunk_counts(session, file_ids=[f.id for f in ready])
    notes = [
        FileNote(f.id, _unsearchable(f), pending=_index_pending(f))
        for f in ready
        if f.id not in in_file
    ]
    if room <= 0 or not query or not query.strip():
        return [], notes
    slots = room // max(1, settings.CHUNK_TOKENS // 2) + 1
    hits = search_chunks(
        session,
        owner_id=project.owner_id,
        project_id=project.id,
        query=query,
        limit=min(MAX_CANDIDATES, slots * CANDIDATES_PER_SLOT),
    )
    category = {f.id: f.category for f in ready}
    kept: list[docs.ProjectDocument] = []
    left = room
    for hit in hits:
        if hit.token_count > left * STORED_COUNT_SLACK:
            continue  # cannot fit: not worth counting
        document = docs.chunk_document(
            _chunk_text(hit, in_file.get(hit.file_id), category.get(hit.file_id)),
            encoding=encoding,
        )
        if document.token_count <= left:
            kept.append(document)
            left -= document.token_count
    return kept, notes


def _chunk_text(hit: ChunkHit, chunks_in_file: int | None, category: str | None) -> docs.ChunkText:
    return docs.ChunkText(
        file_id=hit.file_id,
        title=hit.title,
        text=hit.text,
        index=hit.index,
        page=hit.page,
        sheet=hit.sheet,
        line_start=hit.line_start,
        line_end=hit.line_end,
        heading=hit.heading,
        chunks_in_file=chunks_in_file,
        category=category,
    )


def _index_pending(f: File) -> bool:
    status = ((f.meta or {}).get("index") or {}).get("status")
    return status not in ("failed", "skipped")


def _unsearchable(f: File) -> str:
    index = (f.meta or {}).get("index") or {}
    if index.get("status") == "failed":
        return f"{f.filename} is not searchable: {index.get('error')}"
    if index.get("status") == "skipped":
        return f"{f.filename} is not searchable: {index.get('reason')}"
    return f"{f.filename} is being indexed for search; its chunks join once that is done"
