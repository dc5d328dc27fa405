"""Full-text search over a project's chunks, in the database's own engine (SPEC §8).

SQLite: FTS5 `MATCH` ranked by `bm25()` (text column weight 1, heading `HEADING_WEIGHT`);
the score is `-bm25`. Only the rows of the project's chunk sets are ranked (the set is in
the chunk id's high bits), and only the top ones are joined to their text.
PostgreSQL: `tsv @@ to_tsquery('english', …)` on the GIN index, ranked by
`ts_rank(tsv, query, 1)` (divided by 1 + log(length), like bm25's length norm).
Both: higher score is better, only chunks of the owner's project's `ready` files.

The query text is user input. It never reaches the engine as syntax: its terms
(`contextq.retrieval.search_terms`: words and phrases of letters and digits) are each
quoted (FTS5 `"word"`, `"us east 1"`) or bare lexemes (tsquery `word`, `(us <-> east)`),
OR-ed, and passed as a bound parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlmodel import Session

from contextq.retrieval.terms import search_terms
from store.project_tables import CHUNK_INDEX_BITS
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


# the owner's project's ready files and the chunk sets they are indexed into
_SCOPE = """WITH scope AS (
    SELECT l.chunk_set_id AS set_id, l.file_id AS file_id, f.filename AS filename
    FROM files f JOIN file_chunk_sets l ON l.file_id = f.id
    WHERE f.owner_id = :owner_id AND f.project_id = :project_id AND f.status = :ready)"""

_COLUMNS = """c.id, s.file_id, s.filename, c.text, c.chunk_index, c.page, c.sheet,
    c.line_start, c.line_end, c.heading, c.token_count"""

# Ranked on the FTS table alone, keeping only the project's sets by the chunk id's high bits
# (`store.project_tables.CHUNK_INDEX_BITS`) before bm25 is computed; the top rows only are
# then joined to their text and file (a set shared by two files of the project: both).
_SQLITE = text(
    f"""{_SCOPE},
    top AS (
        SELECT rowid AS id, -bm25(chunks_fts, 1.0, {HEADING_WEIGHT}) AS score FROM chunks_fts
        WHERE chunks_fts MATCH :match
        AND (rowid >> {CHUNK_INDEX_BITS}) IN (SELECT set_id FROM scope)
        ORDER BY score DESC, rowid LIMIT :limit)
    SELECT {_COLUMNS}, top.score AS score
    FROM top JOIN chunks c ON c.id = top.id JOIN scope s ON s.set_id = c.chunk_set_id
    ORDER BY top.score DESC, c.id, s.file_id"""  # noqa: S608 - constants only; values are bound
)

_POSTGRES = text(
    f"""{_SCOPE},
    top AS (
        SELECT c.id AS id, ts_rank(c.tsv, q.query, 1) AS score
        FROM (SELECT to_tsquery('english'::regconfig, :tsquery) AS query) q, chunks c
        WHERE c.tsv @@ q.query AND c.chunk_set_id IN (SELECT set_id FROM scope)
        ORDER BY score DESC, c.id LIMIT :limit)
    SELECT {_COLUMNS}, top.score AS score
    FROM top JOIN chunks c ON c.id = top.id JOIN scope s ON s.set_id = c.chunk_set_id
    ORDER BY top.score DESC, c.id, s.file_id"""  # noqa: S608 - constants only; values are bound
)


def fts5_match(terms: list[str]) -> str:
    """An FTS5 query matching any of `terms` (words, or phrases of words separated by a
    space); quoted, so nothing in them is syntax."""
    return " OR ".join(f'"{t}"' for t in terms)


def tsquery_text(terms: list[str]) -> str:
    """A `to_tsquery` input matching any of `terms`: a phrase's words must be adjacent."""
    return " | ".join(f"({' <-> '.join(t.split())})" if " " in t else t for t in terms)


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
    hits = [_hit(row) for row in session.execute(stmt, params)]
    return hits[:limit]  # a chunk of a set two files share comes once per file


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
