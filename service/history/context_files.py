"""The files a context shows, as the engine's `FileView`s
(docs/history.md#how-files-are-given-to-the-model).

One query reads the rows of the files the loaded messages name (status, category,
truncation, metadata: these change while a file is processed, so they are always read);
processed texts and binary artefacts are immutable once a file is ready, so they are
kept in process-wide caches — texts by file id, images and audio (base64) by content
sha256 — bounded by size. A file id no row of the owner has any more is `missing`
(deleted since it was attached: `append_messages` refuses unknown ids).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from sqlmodel import Session

from contextq.assembly import FileView
from contextq.lru import LRU
from contextq.settings import Settings
from service.file_texts import TEXTS
from store import context_queries as q
from store.blobs import BlobStoreUnavailable, get_blob_store

ARTEFACTS: LRU[str, str] = LRU(256_000_000, weigh=len)  # base64 images / audio by content sha256


def load_file_views(
    session: Session, *, settings: Settings, owner_id: str, file_ids: Sequence[str]
) -> dict[str, FileView]:
    """A view of every id in `file_ids` (missing ones included)."""
    wanted = list(dict.fromkeys(file_ids))
    if not wanted:
        return {}
    rows = {row.id: row for row in q.file_rows(session, owner_id=owner_id, file_ids=wanted)}
    texts = _texts(session, [r for r in rows.values() if r.status == "ready"])
    views: dict[str, FileView] = {}
    for file_id in wanted:
        row = rows.get(file_id)
        views[file_id] = (
            FileView(file_id, "missing") if row is None else _view(row, texts, settings)
        )
    return views


def _texts(session: Session, ready: Sequence[Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    missing: list[str] = []
    for row in ready:
        text = TEXTS.get(row.id)
        if text is None:
            missing.append(row.id)
        else:
            found[row.id] = text
    for file_id, text in q.file_texts(session, file_ids=missing).items():
        TEXTS.put(file_id, text)
        found[file_id] = text
    return found


def _view(row: Any, texts: dict[str, str], settings: Settings) -> FileView:
    truncation = row.truncation or {}
    summary = truncation.get("summary") if truncation.get("truncated") else None
    data = None
    if row.status == "ready" and row.content_sha256 and row.category in ("image", "audio"):
        data = _artefact(row.content_sha256, settings)
    return FileView(
        id=row.id,
        status=row.status,
        filename=row.filename,
        category=row.category,
        file_type=row.file_type,
        text=texts.get(row.id),
        truncation_summary=summary or None,
        metadata=row.meta or {},
        error=row.error,
        data_b64=data,
        media_type=row.content_media_type,
    )


def _artefact(sha256: str, settings: Settings) -> str | None:
    """The base64 of a stored artefact (None when it is gone from storage)."""
    found = ARTEFACTS.get(sha256)
    if found is not None:
        return found
    try:
        raw = get_blob_store(settings).read_bytes(sha256)
    except (OSError, BlobStoreUnavailable):
        return None
    encoded = base64.b64encode(raw).decode("ascii")
    ARTEFACTS.put(sha256, encoded)
    return encoded
