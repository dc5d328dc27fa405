"""Indexing a project file's whole text for search (docs/retrieval.md), in the worker.

The file engine's `iter_sections` reads the WHOLE extracted text (documents from the
conversion cache `process_file` just filled, text and tables streamed), the chunker cuts
it at about CHUNK_TOKENS, and the store keeps the chunks under the bytes' sha256 + the
chunker's fingerprint, so the same bytes are chunked once, whoever uploads them again.

When it runs:
- `process_file` indexes a file that is in a project *before* writing it `ready`, so a
  ready project file is searchable; the result goes into the same write
  (`metadata.index`);
- `index_file` (the `index_file` task) indexes a ready file moved into a project
  afterwards (`PATCH /v1/files/{id}`), and one moved in while it was processing.

Files indexed before hybrid search (migration 0014) have chunks but no vectors: the beat's
`embed_missing` sweep (`embed_missing_vectors`) embeds a few of those chunk sets per run,
off the request path, until none is left.

Indexing never fails the file: an error (or the task's soft time limit) is logged and
recorded as `metadata.index = {"status": "failed", "error": …}`; the file stays `ready`.
`metadata.index` is otherwise `{"status": "indexed", "chunks", "tokens", "complete"}`
plus `"stopped_at"` ({"page": 212}, {"sheet", "line"}) when MAX_INDEX_TOKENS_PER_FILE cut
it, `{"status": "skipped", "reason"}` for files with no text to index, or
`{"status": "running", "attempts"}` while an `index_file` task works on it.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextq.files.fulltext import FullText, StopPoint, iter_sections
from contextq.retrieval import embedding
from contextq.retrieval.chunking import (
    ChunkedText,
    ChunkerOptions,
    chunk_sections,
    chunk_set_key,
)
from contextq.settings import Settings
from service.files.conversion import conversion_cache
from store import projects_queries as pq
from store.blobs import get_blob_store
from store.chunks_queries import (
    file_chunk_set,
    find_chunk_set,
    link_file,
    missing_vector_sets,
    set_chunks,
    store_chunk_set,
    store_vectors,
)
from store.db import session_scope
from store.project_tables import ChunkSet
from store.tables import File, FileStatus

log = logging.getLogger("contextq.files")

INDEXED, SKIPPED, FAILED, RUNNING = "indexed", "skipped", "failed", "running"
BACKFILL_MAX_SETS = 20  # chunk sets embedded per sweep at most
BACKFILL_MAX_CHUNKS = 20_000  # a sweep stops after the set that passes this (≈ 5 s)


@dataclass(frozen=True)
class IndexTarget:
    """What indexing needs of a file: its id, bytes and what processing learned."""

    file_id: str
    sha256: str
    filename: str
    category: str
    known_tokens: int | None  # exact tokens of the whole text, when processing counted them
    # what processing extracted, in this process (a document's conversion): chunked as it
    # is, the file is not read or converted again
    full_text: Any = None


@dataclass(frozen=True)
class Indexed:
    meta: dict[str, Any]  # metadata.index
    duration_s: float


def target_of(row: File) -> IndexTarget:
    meta = row.meta or {}
    exact = meta.get("token_count_exact", True) is not False
    return IndexTarget(
        file_id=row.id,
        sha256=row.sha256,
        filename=row.filename,
        category=row.category,
        known_tokens=row.token_count if exact else None,
    )


def index_content(*, settings: Settings, target: IndexTarget) -> Indexed:
    """Chunk and store the file's whole text (or reuse the chunks of the same bytes) and
    link the file to them. Never raises an Exception: a failure is the result."""
    started = time.perf_counter()
    try:
        meta = _index(settings, target)
    except Exception as exc:  # the soft time limit included: the file must stay ready
        log.exception("file %s: indexing failed", target.file_id)
        meta = {"status": FAILED, "error": _reason(exc, settings)}
    elapsed = time.perf_counter() - started
    log.info(
        "file %s indexed: status=%s chunks=%s duration_ms=%.1f",
        target.file_id,
        meta["status"],
        meta.get("chunks", 0),
        elapsed * 1000,
    )
    return Indexed(meta, elapsed)


def _index(settings: Settings, target: IndexTarget) -> dict[str, Any]:
    options = ChunkerOptions.from_settings(settings)
    key = chunk_set_key(target.sha256, options)
    with session_scope(write=False) as s:
        stored = find_chunk_set(s, key=key)
    chunked = vectors = None
    if stored is None:
        chunked = _chunk(settings, target, options)
        if chunked is None:
            return {"status": SKIPPED, "reason": f"{target.category} files have no text to index"}
        vectors = embedding.chunk_vectors(chunked.chunks)
    with session_scope() as s:
        chunk_set = store_chunk_set(
            s,
            key=key,
            content_sha256=target.sha256,
            chunker=options.fingerprint(),
            chunked=chunked,
            vectors=vectors,
            embedder=embedding.EMBEDDER,
        )
        assert chunk_set.id is not None
        link_file(s, file_id=target.file_id, chunk_set_id=chunk_set.id)
    return index_meta(chunk_set)


def _chunk(settings: Settings, target: IndexTarget, options: ChunkerOptions) -> ChunkedText | None:
    """The chunks of the file's whole text, or None when it has no text to index."""
    blobs = get_blob_store(settings)
    if target.full_text is not None:  # processing's own conversion: no second read
        full = iter_sections(
            Path(target.filename),
            target.filename,
            settings=settings,
            max_tokens=options.max_tokens,
            known_tokens=target.known_tokens,
            converted=target.full_text,
        )
        return _chunked(full, options)
    with blobs.local_copy(target.sha256) as blob_path:  # the sections are read lazily
        full = iter_sections(
            blob_path,
            target.filename,
            settings=settings,
            cache=conversion_cache(settings, blobs),
            max_tokens=options.max_tokens,
            known_tokens=target.known_tokens,
        )
        return _chunked(full, options)


def _chunked(full: FullText, options: ChunkerOptions) -> ChunkedText | None:
    if not full.indexable:
        return None
    chunked = chunk_sections(full, options=options)
    if chunked.complete and full.stopped_at is not None:  # the reader stopped first
        chunked = dataclasses.replace(chunked, complete=False, stopped_at=_where(full.stopped_at))
    return chunked


def _where(stop: StopPoint) -> dict[str, int | str]:
    where: dict[str, int | str] = {}
    if stop.page is not None:
        where["page"] = stop.page
    if stop.sheet is not None:
        where["sheet"] = stop.sheet
    if stop.line is not None:
        where["line"] = stop.line
    return where


def index_meta(chunk_set: ChunkSet) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "status": INDEXED,
        "chunks": chunk_set.chunk_count,
        "tokens": chunk_set.token_count,
        "complete": chunk_set.complete,
    }
    if not chunk_set.complete:
        meta["stopped_at"] = chunk_set.stopped_at or {}
    return meta


def _reason(exc: Exception, settings: Settings) -> str:
    if type(exc).__name__ == "SoftTimeLimitExceeded":
        return (
            f"indexing hit the task's time limit ({settings.TASK_SOFT_TIME_LIMIT_S} s); "
            "the file is not searchable: lower MAX_INDEX_TOKENS_PER_FILE or split the file"
        )
    return f"indexing failed ({type(exc).__name__}: {str(exc)[:300]}); the file is not searchable"


def index_file(*, settings: Settings, file_id: str) -> Indexed | None:
    """The `index_file` task: index a ready file of a project that is not yet indexed by
    the current chunker configuration, and record it in `metadata.index`. None when
    there is nothing to do (gone, not ready, in no project, already indexed).

    Each run first records `{"status": "running", "attempts": n}`: a file whose indexing
    killed the worker MAX_ATTEMPTS times (its message comes back each time) is recorded
    `failed` instead of being tried again."""
    target, attempts = _claim_indexing(settings, file_id)
    if target is None:
        return None
    if attempts > settings.MAX_ATTEMPTS:
        error = (
            f"indexing stopped the worker {attempts - 1} times (killed or over its memory "
            "or time limit); the file is not searchable: split it or lower "
            "MAX_INDEX_TOKENS_PER_FILE"
        )
        done = Indexed({"status": FAILED, "error": error}, 0.0)
        log.error("file %s: %s", file_id, error)
    else:
        done = index_content(settings=settings, target=target)
    with session_scope() as s:
        pq.set_index_meta(s, file_id=file_id, index=done.meta)
    return done


def _claim_indexing(settings: Settings, file_id: str) -> tuple[IndexTarget | None, int]:
    """(what to index, this attempt's number), recorded as running; (None, 0) when there
    is nothing to do."""
    options = ChunkerOptions.from_settings(settings)
    with session_scope() as s:
        row = s.get(File, file_id, with_for_update=True)  # a duplicate message waits here
        if row is None or row.status != FileStatus.READY or row.project_id is None:
            return None, 0
        current = file_chunk_set(s, file_id=file_id)
        if current is not None and current.key == chunk_set_key(row.sha256, options):
            return None, 0
        previous = (row.meta or {}).get("index") or {}
        attempts = int(previous.get("attempts", 0)) + 1 if previous.get("status") == RUNNING else 1
        pq.set_index_meta(s, file_id=file_id, index={"status": RUNNING, "attempts": attempts})
        return target_of(row), attempts


def file_project(*, file_id: str) -> str | None:
    """The file's project now (read after its result was written)."""
    with session_scope(write=False) as s:
        row = s.get(File, file_id)
        return None if row is None else row.project_id


@dataclass(frozen=True)
class Backfill:
    sets: int  # chunk sets embedded
    chunks: int
    left: bool  # more sets without vectors remain (the next sweep goes on)

    def as_dict(self) -> dict[str, Any]:
        return {"sets": self.sets, "chunks": self.chunks, "left": self.left}


def embed_missing_vectors(*, max_chunks: int = BACKFILL_MAX_CHUNKS) -> Backfill:
    """The `embed_missing` sweep: embed the chunk sets that files use but that have no
    passage vectors (indexed before hybrid search), oldest first, up to about
    `max_chunks` chunks per run; one transaction per set. Dense and hybrid search see a
    set as soon as its transaction commits (bm25 saw it all along). Two sweeps at once
    embed the same set to the same vectors: harmless."""
    sets = chunks = 0
    with session_scope(write=False) as s:
        todo = missing_vector_sets(s, limit=BACKFILL_MAX_SETS + 1)
    for set_id in todo[:BACKFILL_MAX_SETS]:
        if chunks >= max_chunks:
            break
        with session_scope(write=False) as s:
            rows = set_chunks(s, chunk_set_id=set_id)
        vectors = embedding.chunk_vectors(rows)
        with session_scope() as s:
            store_vectors(s, chunk_set_id=set_id, chunks=rows, vectors=vectors,
                          embedder=embedding.EMBEDDER)  # fmt: skip
        sets, chunks = sets + 1, chunks + len(rows)
        log.info("chunk set %s: %s chunks embedded (backfill)", set_id, len(rows))
    return Backfill(sets, chunks, left=len(todo) > sets)
