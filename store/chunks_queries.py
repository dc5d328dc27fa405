"""Chunk sets: store, reuse, link to files, delete (docs/retrieval.md). Search is in
`store/search.py`.

The indexing flow (the worker's step after processing a file; chunking runs outside any
transaction):

    key = chunk_set_key(file.sha256, options)
    with session_scope(write=False) as s:  reusable = find_chunk_set(s, key=key)
    chunked = None if reusable else chunk_sections(iter_sections(...), options=options)
    with session_scope() as s:
        chunk_set = store_chunk_set(s, key=key, content_sha256=file.sha256,
                                    chunker=options.fingerprint(), chunked=chunked)
        link_file(s, file_id=file.id, chunk_set_id=chunk_set.id)

`store_chunk_set` returns the stored set when the key exists (another file or worker with
the same bytes got there first), so concurrent indexing of the same bytes stores one set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, exists, func, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col

from contextq.retrieval import embedding
from contextq.retrieval.chunking import ChunkedText
from contextq.retrieval.embedding import Matrix
from contextq.retrieval.types import Chunk
from store.project_tables import ChunkRow, ChunkSet, FileChunkSet, chunk_id
from store.tables import File, FileStatus

INSERT_BATCH = 2000
MAX_SHEET_CHARS = 255


def find_chunk_set(session: Session, *, key: str) -> ChunkSet | None:
    return session.execute(select(ChunkSet).where(col(ChunkSet.key) == key)).scalar_one_or_none()


def store_chunk_set(
    session: Session,
    *,
    key: str,
    content_sha256: str,
    chunker: str,
    chunked: ChunkedText | None,
    vectors: Sequence[Matrix] | None = None,
    embedder: str | None = None,
) -> ChunkSet:
    """The set stored under `key`: the existing one, else a new one with `chunked`'s chunks
    (their full-text entries too, and `vectors`, one matrix of passage vectors per chunk,
    made by `embedder`).
    `chunked` may be None only when the key exists."""
    existing = find_chunk_set(session, key=key)
    if existing is not None:
        return existing
    if chunked is None:
        raise LookupError(f"chunk set {key} is not stored and no chunks were given")
    chunk_set = ChunkSet(
        key=key,
        content_sha256=content_sha256,
        chunker=chunker,
        chunk_count=len(chunked.chunks),
        token_count=chunked.token_count,
        complete=chunked.complete,
        stopped_at=chunked.stopped_at,
        embedder=embedder if vectors is not None else None,
    )
    if vectors is not None and len(vectors) != len(chunked.chunks):
        raise ValueError(f"{len(vectors)} vectors for {len(chunked.chunks)} chunks")
    try:
        with session.begin_nested():
            session.add(chunk_set)
            session.flush()
    except IntegrityError:  # stored by another worker since we looked (PostgreSQL waits here)
        stored = find_chunk_set(session, key=key)
        if stored is None:
            raise
        return stored
    assert chunk_set.id is not None
    _insert_chunks(session, chunk_set.id, chunked.chunks, vectors)
    return chunk_set


_COLUMNS = (
    "id, chunk_set_id, chunk_index, text, heading, token_count, page, sheet, line_start, "
    "line_end, embedding"
)

# SQLite's full-text entries of a set's chunks, added in one statement (the PostgreSQL
# tsvector is a generated column); removal is by trigger (migration 0004_projects_chunks)
_FTS_ADD = text(
    "INSERT INTO chunks_fts(rowid, text, heading) "
    "SELECT id, text, heading FROM chunks WHERE id >= :first AND id < :after"
)


def _insert_chunks(
    session: Session, chunk_set_id: int, chunks: Sequence[Chunk], vectors: Sequence[Matrix] | None
) -> None:
    """The driver's executemany with tuples: a third of the time of Core's insert with a
    dict per row (≈ 9 vs 32 ms for the 1 071 chunks of a 300-page PDF)."""
    if not chunks:
        return
    connection = session.connection()
    mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    marks = ", ".join([mark] * len(_COLUMNS.split(", ")))
    statement = f"INSERT INTO chunks ({_COLUMNS}) VALUES ({marks})"  # noqa: S608 - constants
    stored = [None] * len(chunks) if vectors is None else embedding.to_bytes_each(vectors)
    rows = [_row(chunk_set_id, c, v) for c, v in zip(chunks, stored, strict=True)]
    for start in range(0, len(rows), INSERT_BATCH):
        connection.exec_driver_sql(statement, rows[start : start + INSERT_BATCH])
    if connection.dialect.name == "sqlite":
        first, after = chunk_id(chunk_set_id, 0), chunk_id(chunk_set_id + 1, 0)
        session.execute(_FTS_ADD, {"first": first, "after": after})


def _row(chunk_set_id: int, chunk: Chunk, vector: bytes | None) -> tuple[Any, ...]:
    return (
        chunk_id(chunk_set_id, chunk.index),
        chunk_set_id,
        chunk.index,
        chunk.text.replace("\x00", ""),
        chunk.heading.replace("\x00", "") if chunk.heading else None,
        chunk.token_count,
        chunk.page,
        chunk.sheet[:MAX_SHEET_CHARS] if chunk.sheet else None,
        chunk.line_start,
        chunk.line_end,
        vector,
    )


def missing_vector_sets(session: Session, *, limit: int) -> list[int]:
    """Ids of chunk sets that a file is linked to but that have no vectors, oldest first."""
    linked = exists(
        select(col(FileChunkSet.file_id)).where(col(FileChunkSet.chunk_set_id) == col(ChunkSet.id))
    )
    stmt = (
        select(col(ChunkSet.id))
        .where(col(ChunkSet.embedder).is_(None), col(ChunkSet.chunk_count) > 0, linked)
        .order_by(col(ChunkSet.id))
        .limit(limit)
    )
    return [int(i) for i in session.execute(stmt).scalars()]


def set_chunks(session: Session, *, chunk_set_id: int) -> list[Chunk]:
    """A set's chunks in order, with what embedding needs (text, heading)."""
    first, after = chunk_id(chunk_set_id, 0), chunk_id(chunk_set_id + 1, 0)
    stmt = (
        select(
            col(ChunkRow.chunk_index),
            col(ChunkRow.text),
            col(ChunkRow.heading),
            col(ChunkRow.token_count),
        )
        .where(col(ChunkRow.id) >= first, col(ChunkRow.id) < after)
        .order_by(col(ChunkRow.id))
    )
    return [
        Chunk(index=r.chunk_index, text=r.text, token_count=r.token_count, heading=r.heading)
        for r in session.execute(stmt)
    ]


def store_vectors(
    session: Session,
    *,
    chunk_set_id: int,
    chunks: Sequence[Chunk],
    vectors: Sequence[Matrix],
    embedder: str,
) -> bool:
    """Write the vectors of a stored set that has none (the backfill of sets indexed
    before hybrid search). False when the set has vectors by now or is gone."""
    claimed = session.execute(
        update(ChunkSet)
        .where(col(ChunkSet.id) == chunk_set_id, col(ChunkSet.embedder).is_(None))
        .values(embedder=embedder)
    )
    if not claimed.rowcount:  # type: ignore[attr-defined]
        return False
    connection = session.connection()
    mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    rows = [
        (embedding.to_bytes(v), chunk_id(chunk_set_id, c.index))
        for c, v in zip(chunks, vectors, strict=True)
    ]
    statement = f"UPDATE chunks SET embedding = {mark} WHERE id = {mark}"  # noqa: S608 - constants
    connection.exec_driver_sql(statement, rows)
    return True


def link_file(session: Session, *, file_id: str, chunk_set_id: int) -> None:
    """Record that `file_id` is indexed into `chunk_set_id` (replacing an older link)."""
    link = session.get(FileChunkSet, file_id)
    if link is None:
        session.add(FileChunkSet(file_id=file_id, chunk_set_id=chunk_set_id))
    else:
        link.chunk_set_id = chunk_set_id
    session.flush()


def file_chunk_set(session: Session, *, file_id: str) -> ChunkSet | None:
    """The set a file is indexed into (chunk count, cap, where indexing stopped), or None."""
    stmt = (
        select(ChunkSet)
        .join(FileChunkSet, col(FileChunkSet.chunk_set_id) == col(ChunkSet.id))
        .where(col(FileChunkSet.file_id) == file_id)
    )
    return session.execute(stmt).scalar_one_or_none()


def release_file_chunks(session: Session, *, file_id: str, content_sha256: str) -> int:
    """Unlink a file (deleted or being deleted) from its chunks; when no other file with
    those bytes remains, delete the chunks of those bytes. Returns the chunks deleted."""
    session.execute(delete(FileChunkSet).where(col(FileChunkSet.file_id) == file_id))
    same_bytes = select(col(File.id)).where(
        col(File.sha256) == content_sha256, col(File.id) != file_id
    )
    if session.execute(same_bytes.limit(1)).first() is not None:
        return 0
    return _delete_sets(session, col(ChunkSet.content_sha256) == content_sha256)


def delete_unused_chunk_sets(session: Session, *, current_chunker: str) -> int:
    """Sweep: delete the sets whose bytes no file has any more, and the sets of another
    chunker configuration that no file is linked to. Returns the chunks deleted."""
    no_file = ~exists(select(col(File.id)).where(col(File.sha256) == col(ChunkSet.content_sha256)))
    unlinked = ~exists(
        select(col(FileChunkSet.file_id)).where(col(FileChunkSet.chunk_set_id) == col(ChunkSet.id))
    )
    return _delete_sets(session, no_file | (unlinked & (col(ChunkSet.chunker) != current_chunker)))


def _delete_sets(session: Session, condition: ColumnElement[bool]) -> int:
    ids = list(session.execute(select(col(ChunkSet.id)).where(condition)).scalars())
    deleted = 0
    for set_id in ids:
        # chunks first, by their id range: on SQLite a trigger removes each from the FTS index
        first, after = chunk_id(set_id, 0), chunk_id(set_id + 1, 0)
        result = session.execute(
            delete(ChunkRow).where(col(ChunkRow.id) >= first, col(ChunkRow.id) < after)
        )
        deleted += int(result.rowcount or 0)  # type: ignore[attr-defined]
        session.execute(delete(ChunkSet).where(col(ChunkSet.id) == set_id))
    return deleted


def count_project_chunks(session: Session, *, owner_id: str, project_id: str) -> int:
    """Chunks of the ready files of one owner's project (what search looks through)."""
    stmt = (
        select(func.coalesce(func.sum(col(ChunkSet.chunk_count)), 0))
        .select_from(File)
        .join(FileChunkSet, col(FileChunkSet.file_id) == col(File.id))
        .join(ChunkSet, col(ChunkSet.id) == col(FileChunkSet.chunk_set_id))
        .where(
            col(File.owner_id) == owner_id,
            col(File.project_id) == project_id,
            col(File.status) == FileStatus.READY,
        )
    )
    return int(session.execute(stmt).scalar_one())
