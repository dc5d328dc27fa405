"""Full-text search over a project's chunks, in the database's own engine (SPEC §8).

SQLite: FTS5 `MATCH` ranked by `bm25()` (text column weight 1, heading `HEADING_WEIGHT`);
the score is `-bm25`. PostgreSQL: `tsv @@ to_tsquery('english', …)` on the GIN index,
ranked by `ts_rank(tsv, query, 1)` (divided by 1 + log(length), like bm25's length norm).
Both: higher score is better, only chunks of the owner's project's `ready` files.

The query text is user input. It never reaches the engine as syntax: its words
(`contextq.retrieval.search_terms`) are each quoted (FTS5 `"word"`) or are bare lexemes
of letters and digits (tsquery) and OR-ed, and passed as a bound parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlmodel import Session

from contextq.retrieval.terms import search_terms
from store.tables import FileStatus

HEADING_WEIGHT = 0.5
MAX_LIMIT = 1000


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


_COLUMNS = """c.id, l.file_id, f.filename, c.text, c.chunk_index, c.page, c.sheet,
    c.line_start, c.line_end, c.heading, c.token_count"""

_SCOPE = """JOIN file_chunk_sets l ON l.chunk_set_id = c.chunk_set_id
    JOIN files f ON f.id = l.file_id
    WHERE f.owner_id = :owner_id AND f.project_id = :project_id AND f.status = :ready"""

_SQLITE = text(
    f"""SELECT {_COLUMNS}, -bm25(chunks_fts, 1.0, {HEADING_WEIGHT}) AS score
    FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
    {_SCOPE} AND chunks_fts MATCH :match
    ORDER BY score DESC, c.id LIMIT :limit"""  # noqa: S608 - constants only; values are bound
)

_POSTGRES = text(
    f"""SELECT {_COLUMNS}, ts_rank(c.tsv, q.query, 1) AS score
    FROM (SELECT to_tsquery('english'::regconfig, :tsquery) AS query) q, chunks c
    {_SCOPE} AND c.tsv @@ q.query
    ORDER BY score DESC, c.id LIMIT :limit"""  # noqa: S608 - constants only; values are bound
)


def fts5_match(terms: list[str]) -> str:
    """An FTS5 query that matches any of `terms` (each a run of letters and digits)."""
    return " OR ".join(f'"{t}"' for t in terms)


def tsquery_text(terms: list[str]) -> str:
    """A `to_tsquery` input that matches any of `terms` (letters and digits only)."""
    return " | ".join(terms)


def search_chunks(
    session: Session, *, owner_id: str, project_id: str, query: str, limit: int
) -> list[ChunkHit]:
    """The chunks of the owner's project that best match `query`, best first (maybe none)."""
    terms = search_terms(query)
    if not terms or limit < 1:
        return []
    params: dict[str, Any] = {
        "owner_id": owner_id,
        "project_id": project_id,
        "ready": FileStatus.READY,
        "limit": min(limit, MAX_LIMIT),
    }
    if session.get_bind().dialect.name == "postgresql":
        stmt, params["tsquery"] = _POSTGRES, tsquery_text(terms)
    else:
        stmt, params["match"] = _SQLITE, fts5_match(terms)
    return [_hit(row) for row in session.execute(stmt, params)]


def _hit(row: Any) -> ChunkHit:
    return ChunkHit(
        chunk_id=int(row.id),
        file_id=row.file_id,
        title=row.filename,
        text=row.text,
        score=float(row.score),
        index=row.chunk_index,
        page=row.page,
        sheet=row.sheet,
        line_start=row.line_start,
        line_end=row.line_end,
        heading=row.heading,
        token_count=row.token_count,
    )
