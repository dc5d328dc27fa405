"""Search over a project's chunks: bm25, dense, or both fused (docs/retrieval.md).

Higher score is better; only chunks of the owner's project's `ready` files are seen.

1. The scope: the chunk sets of the project's ready files (one indexed query).
2. `bm25`: the database's own full-text engine (`store/search_bm25.py`: SQLite FTS5,
   `store/search_postgres.py`: PostgreSQL tsvector), score as the engine gives it.
3. `dense`: the query embedded in this process (`contextq.retrieval.embedding`) against
   the sets' stored chunk vectors, cached per process (`contextq.retrieval.dense`),
   brute force; score the cosine. A set indexed before vectors existed has none: dense
   search does not see it (bm25 does).
4. `hybrid` (the default): both rankings to depth `FUSION_DEPTH`, fused by reciprocal
   rank; score the fused score.
5. Only the final `limit` chunks are read with their text and file.

A chunk of a set that two files of the project share is listed once per file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from sqlalchemy import bindparam, text
from sqlmodel import Session
from threadpoolctl import threadpool_limits

from contextq.retrieval import embedding
from contextq.retrieval.dense import Ranked, SetKey, SetMatrix, SetVectors, dense_top, fuse
from contextq.retrieval.terms import search_terms
from store.search_bm25 import fts5_ranked
from store.search_postgres import postgres_ranked
from store.tables import FileStatus

log = logging.getLogger("contextq.search")

MAX_LIMIT = 1000
FUSION_DEPTH = 50  # each ranking's depth that hybrid fuses (at least the limit)
Mode = Literal["bm25", "dense", "hybrid"]
MODES: tuple[str, ...] = get_args(Mode)

VECTORS = SetVectors()  # this process's cache of chunk sets' vectors


@dataclass(frozen=True, slots=True)
class ChunkHit:
    chunk_id: int
    file_id: str
    title: str  # the file's name
    text: str
    score: float  # higher is better; comparable within one search only
    index: int  # the chunk's index in its file
    page: int | None
    sheet: str | None
    line_start: int | None
    line_end: int | None
    heading: str | None
    token_count: int


@dataclass(frozen=True, slots=True)
class ScopeFile:
    set_id: int
    set_key: str
    file_id: str
    filename: str


def search_chunks(
    session: Session,
    *,
    owner_id: str,
    project_id: str,
    query: str,
    limit: int,
    mode: Mode = "hybrid",
) -> list[ChunkHit]:
    """The chunks of the owner's project that best match `query`, best first (maybe none)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    limit = min(limit, MAX_LIMIT)
    if limit < 1 or not query.strip():
        return []
    scope = project_scope(session, owner_id=owner_id, project_id=project_id)
    if not scope:
        return []
    ranked = rank(session, query, sorted({(f.set_id, f.set_key) for f in scope}), limit, mode)
    return _hits(session, ranked[:limit], scope)[:limit]


def bm25_ranked(session: Session, terms: list[str], set_ids: list[int], depth: int) -> Ranked:
    """The best `depth` chunks of `set_ids` for `terms` by the database's own bm25, best
    first (maybe none)."""
    if not terms or not set_ids or depth < 1:
        return []
    if session.get_bind().dialect.name == "postgresql":
        return postgres_ranked(session, terms, set_ids, depth)
    return fts5_ranked(session, terms, set_ids, depth)


def rank(session: Session, query: str, sets: list[SetKey], limit: int, mode: Mode) -> Ranked:
    """(chunk id, score) of the chunks of `sets`, best first, by `mode`."""
    depth = limit if mode != "hybrid" else max(limit, FUSION_DEPTH)
    bm25: Ranked = []
    dense: Ranked = []
    if mode != "dense":
        bm25 = bm25_ranked(session, search_terms(query), [i for i, _ in sets], depth)
    if mode != "bm25":
        dense = dense_ranked(session, query, sets, depth)
    if mode == "bm25":
        return bm25
    if mode == "dense":
        return dense
    return fuse(bm25, dense)


def dense_ranked(session: Session, query: str, sets: list[SetKey], depth: int) -> Ranked:
    vector = embedding.embed_query(query)
    matrices = VECTORS.get(sets, lambda missing: load_vectors(session, missing))
    return dense_top(matrices, vector, depth)


def load_vectors(session: Session, sets: list[SetKey]) -> dict[SetKey, SetMatrix]:
    """The stored passage vectors of the sets embedded by the current embedder (or its
    legacy storage)."""
    keys = dict(sets)
    params = {"sets": list(keys), "embedders": [embedding.EMBEDDER, *embedding.LEGACY_EMBEDDERS]}
    by_set: dict[int, list[tuple[int, Any]]] = {}
    for row in session.execute(_VECTORS, params):
        vectors = embedding.from_bytes(bytes(row.embedding), row.embedder)
        by_set.setdefault(int(row.chunk_set_id), []).append((int(row.id), vectors))
    return {(s, keys[s]): _matrix(chunks) for s, chunks in by_set.items()}


def _matrix(chunks: list[tuple[int, Any]]) -> SetMatrix:
    sizes = np.fromiter((len(v) for _, v in chunks), np.intp, len(chunks))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    ids = np.fromiter((chunk for chunk, _ in chunks), np.int64, len(chunks))
    return SetMatrix.of(ids, starts, np.concatenate([v for _, v in chunks]))


def project_scope(session: Session, *, owner_id: str, project_id: str) -> list[ScopeFile]:
    """The chunk sets of the owner's project's ready files, with their files."""
    stmt = _SCOPE.get(session.get_bind().dialect.name, _SCOPE["postgresql"])
    rows = session.execute(
        stmt, {"owner_id": owner_id, "project_id": project_id, "ready": FileStatus.READY}
    )
    return [ScopeFile(int(r.set_id), r.set_key, r.file_id, r.filename) for r in rows]


def _hits(session: Session, ranked: Ranked, scope: list[ScopeFile]) -> list[ChunkHit]:
    if not ranked:
        return []
    rows = {int(r.id): r for r in session.execute(_CHUNKS, {"ids": [chunk for chunk, _ in ranked]})}
    files: dict[int, list[ScopeFile]] = {}
    for f in sorted(scope, key=lambda f: f.file_id):
        files.setdefault(f.set_id, []).append(f)
    hits: list[ChunkHit] = []
    for chunk, score in ranked:
        row = rows.get(chunk)
        if row is not None:
            hits.extend(_hit(row, f, score) for f in files.get(int(row.chunk_set_id), ()))
    return hits


def _hit(row: Any, file: ScopeFile, score: float) -> ChunkHit:
    return ChunkHit(
        chunk_id=int(row.id),
        file_id=file.file_id,
        title=file.filename,
        text=row.text,
        score=score,
        index=row.chunk_index,
        page=row.page,
        sheet=row.sheet,
        line_start=row.line_start,
        line_end=row.line_end,
        heading=row.heading,
        token_count=row.token_count,
    )


def warm() -> None:
    """Load the embedding model now (≈ 0.5 s), not in the first search, keep numpy's BLAS
    to one thread in this process (a request's products are small, and threads of
    concurrent requests would only contend for the cores), and run one dense ranking over
    a tiny matrix: the first query's word lookups and the SIMD kernels' dispatch (≈ 3 ms)
    are paid here too."""
    threadpool_limits(limits=1, user_api="blas")
    vectors = embedding.quantise(embedding.embed_texts(["warm up", "the dense ranking"]))
    tiny = SetMatrix.of(np.arange(2, dtype=np.int64), np.arange(2, dtype=np.intp), vectors)
    dense_top([tiny], embedding.embed_query("warm up the search"), 1)


# the owner's project's ready files and their chunk sets; on SQLite the `+` keeps the
# planner on the project index (not the status one, which every file shares)
_SCOPE_SQL = """SELECT l.chunk_set_id AS set_id, cs.key AS set_key, l.file_id AS file_id,
        f.filename AS filename
    FROM files f JOIN file_chunk_sets l ON l.file_id = f.id
    JOIN chunk_sets cs ON cs.id = l.chunk_set_id
    WHERE f.project_id = :project_id AND {plus}f.owner_id = :owner_id
    AND {plus}f.status = :ready"""
_SCOPE = {
    "sqlite": text(_SCOPE_SQL.format(plus="+")),
    "postgresql": text(_SCOPE_SQL.format(plus="")),
}

_CHUNKS = text(
    """SELECT id, chunk_set_id, text, chunk_index, page, sheet, line_start, line_end,
        heading, token_count FROM chunks WHERE id IN :ids"""
).bindparams(bindparam("ids", expanding=True))

_VECTORS = text(
    """SELECT c.id, c.chunk_set_id, c.embedding, s.embedder FROM chunks c
    JOIN chunk_sets s ON s.id = c.chunk_set_id
    WHERE c.chunk_set_id IN :sets AND s.embedder IN :embedders
    AND c.embedding IS NOT NULL AND length(c.embedding) > 0
    ORDER BY c.id"""
).bindparams(bindparam("sets", expanding=True), bindparam("embedders", expanding=True))
