"""`GET …/workspace/{path}?view=processed[&offset=&limit=]` (docs/workspaces.md): a workspace
file's processed view, and later portions of it on request.

Without `offset`/`limit` the answer is the File's processed text (what the processors
made for the context: head and tail rows of a table, depth-limited JSON, …) with its
truncation, once the worker has processed it. With them, the engine's portion readers
(`contextq.workspace.portions`) read lines, data rows (header always shown) or pages
from the workspace file itself; documents read their pages from the conversion the
worker cached, so they wait for processing too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlmodel import Session

from contextq.errors import Conflict
from contextq.files.detect import detect
from contextq.settings import Settings
from contextq.workspace import WorkspaceTree
from contextq.workspace.portions import Portion, read_portion, unit_for
from service import files
from service.files.claims import LEASE_MARGIN_S
from service.workspaces.locate import existing_entry
from store import files_queries as fq
from store.blobs import get_blob_store
from store.conversion_cache import DbConversionCache
from store.tables import File, FileStatus
from store.workspace_tables import WorkspaceEntry

PROC_FD = Path("/proc/self/fd")
TOTAL_META_KEY = {"rows": "rows", "lines": "lines", "pages": "pages"}


@dataclass(frozen=True)
class PortionView:
    unit: str
    offset: int
    returned: int
    next_offset: int | None
    total: int | None
    sheet: str | None


@dataclass(frozen=True)
class ProcessedView:
    path: str
    file_id: str | None
    status: str | None
    category: str | None
    file_type: str | None
    text: str
    token_count: int | None
    processed_token_count: int | None
    truncation: dict[str, Any] | None
    portion: PortionView | None = None


def processed_view(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    path: str,
    offset: int | None = None,
    limit: int | None = None,
    sheet: str | None = None,
) -> ProcessedView:
    entry, tree = existing_entry(
        session, settings, owner_id=owner_id, conversation_id=conversation_id, path=path
    )
    row = None
    if entry.file_id is not None:
        row = files.get_file(session=session, owner_id=owner_id, file_id=entry.file_id)
    if offset is None and limit is None and sheet is None:
        return _whole(session, entry, _ready(entry, row))
    return _portion(settings, tree, entry, row, offset=offset or 0, limit=limit, sheet=sheet)


def _ready(entry: WorkspaceEntry, row: File | None) -> File:
    if row is None:
        raise Conflict(
            f"`{entry.path}` has no processed view: its File was deleted; PUT the file again"
        )
    if row.status == FileStatus.FAILED:
        raise Conflict(f"`{entry.path}` failed to process: {row.error}")
    if row.status != FileStatus.READY:
        raise Conflict(
            f"`{entry.path}` is not processed yet (status: {row.status}); ask again once "
            f"GET /v1/files/{row.id}?wait=30 answers ready"
        )
    return row


def _whole(session: Session, entry: WorkspaceEntry, row: File) -> ProcessedView:
    return ProcessedView(
        path=entry.path,
        file_id=row.id,
        status=row.status,
        category=row.category,
        file_type=row.file_type,
        text=fq.file_text(session, file_id=row.id) or "",
        token_count=row.token_count,
        processed_token_count=row.processed_token_count,
        truncation=row.truncation,
    )


def _portion(
    settings: Settings,
    tree: WorkspaceTree,
    entry: WorkspaceEntry,
    row: File | None,
    *,
    offset: int,
    limit: int | None,
    sheet: str | None,
) -> ProcessedView:
    name = entry.path.rsplit("/", 1)[-1]
    with tree.open_file(entry.path) as fh:
        # read through the descriptor opened without following links, not by name again
        path = PROC_FD / str(fh.fileno()) if PROC_FD.is_dir() else tree.root / entry.path
        info = detect(path, name)
        cache = None
        if unit_for(info) == "pages":  # documents: from the worker's cached conversion
            _ready(entry, row)
            cache = _conversion_cache(settings)
        portion = read_portion(
            path, info, offset=offset, limit=limit, settings=settings, cache=cache, sheet=sheet
        )
    total = portion.total
    if total is None and row is not None and row.meta:
        known = row.meta.get(TOTAL_META_KEY[portion.unit])
        total = known if isinstance(known, int) else None
    return ProcessedView(
        path=entry.path,
        file_id=row.id if row else None,
        status=row.status if row else None,
        category=info.category,
        file_type=info.file_type,
        text=portion.text,
        token_count=row.token_count if row else None,
        processed_token_count=None,
        truncation=_portion_truncation(portion, total),
        portion=PortionView(
            portion.unit, offset, portion.returned, portion.next_offset, total, portion.sheet
        ),
    )


def _portion_truncation(portion: Portion, total: int | None) -> dict[str, Any]:
    shown = f"{portion.unit} {portion.offset}-{portion.offset + portion.returned - 1}"
    if not portion.returned:
        shown = f"no {portion.unit} from offset {portion.offset}"
    of = f" of {total}" if total is not None else ""
    header = " (header row shown)" if portion.unit == "rows" else ""
    more = f"; continue at offset={portion.next_offset}" if portion.next_offset is not None else ""
    cut = "; long lines or cells were cut" if portion.truncated else ""
    whole = portion.offset == 0 and portion.next_offset is None and not portion.truncated
    return {"truncated": not whole, "summary": f"{shown}{of}{header}{more}{cut}"}


def _conversion_cache(settings: Settings) -> Any:
    return DbConversionCache(
        blobs=get_blob_store(settings),
        redis_url=settings.REDIS_URL,
        lock_timeout_s=settings.TASK_TIME_LIMIT_S + LEASE_MARGIN_S,
        wait_timeout_s=settings.TASK_SOFT_TIME_LIMIT_S,
    )
