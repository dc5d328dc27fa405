"""Full-text search over a project's chunks, in the database's own engine (SPEC §8).

Higher score is better; only chunks of the owner's project's `ready` files are seen.

SQLite: FTS5 ranked by `bm25()` (text column weight 1, heading `HEADING_WEIGHT`), score
`-bm25`. Only rows of the project's chunk sets are ranked (a chunk id's high bits are its
set: no lookup per matching row), and only the top ones are joined to their text and file.
A query's terms are split by how many indexed chunks contain them (one cheap count each):
the candidates are the chunks with at least one *distinctive* term (in at most
`DISTINCTIVE_SHARE` of the chunks), each scored by bm25 over *all* the terms — as two
FTS5 queries, `(distinctive) AND (common)` and `(distinctive) NOT (common)`, so no term is
counted twice; a common phrase is left out (its words are terms already). Chunks with
only common terms (`warranty`, `contract` in a folder of contracts) are not ranked at
all: this keeps search to a few milliseconds, and can only move an answer that has a
distinctive term up, never down. A query with no distinctive term is ranked over all its
matches.

PostgreSQL: `tsv @@ to_tsquery('english', …)` on the GIN index, ranked by
`ts_rank(tsv, query, 1)` (divided by 1 + log(length), like bm25's length norm); the same
split, with matching on the distinctive terms and ranking on all: a term is common when
all its lexemes are among the column's most common elements (`pg_stats`, kept by
ANALYZE) in more than `DISTINCTIVE_SHARE` of the rows.

The query text is user input. It never reaches the engine as syntax: its terms
(`contextq.retrieval.search_terms`: words and phrases of letters and digits) are each
quoted (FTS5 `"word"`, `"us east 1"`) or bare lexemes (tsquery `word`, `(us <-> east)`),
OR-ed, and passed as bound parameters.
"""

# S608: the statements below are built from this module's constants only; every value
# (ids, the MATCH and tsquery texts, the limit) is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import TextClause, text
from sqlmodel import Session

from contextq.retrieval.terms import search_terms
from store.project_tables import CHUNK_INDEX_BITS
from store.tables import FileStatus

HEADING_WEIGHT = 0.5
MAX_LIMIT = 1000
DISTINCTIVE_SHARE = 0.05


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
        stmt = _postgres_statement(session, terms, params)
    else:
        stmt = _sqlite_statement(session, terms, params)
        if stmt is None:
            return []
    hits = [_hit(row) for row in session.execute(stmt, params)]
    return hits[:limit]  # a chunk of a set that two files of the project share: once per file


def _sqlite_statement(
    session: Session, terms: list[str], params: dict[str, Any]
) -> TextClause | None:
    """The FTS5 statement for `terms` (its MATCH parameters set), or None if no term occurs."""
    counts = _document_counts(session, terms)
    indexed = session.execute(_INDEXED).scalar_one()
    limit = DISTINCTIVE_SHARE * indexed
    distinctive = [t for t, n in zip(terms, counts, strict=True) if 0 < n <= limit]
    # a common phrase is no identifier: its words are terms already, and its positional
    # matching is the dearest part of bm25's statistics
    common = [t for t, n in zip(terms, counts, strict=True) if n > limit and " " not in t]
    if distinctive and common:
        rare, usual = fts5_match(distinctive), fts5_match(common)
        params["with_common"] = f"({rare}) AND ({usual})"
        params["without_common"] = f"({rare}) NOT ({usual})"
        return _SQLITE_SPLIT
    if not (distinctive or common):
        return None
    params["match"] = fts5_match(distinctive or common)
    return _SQLITE


def _postgres_statement(session: Session, terms: list[str], params: dict[str, Any]) -> TextClause:
    """Matches chunks with a distinctive term (its lexemes not all among the column's most
    common ones, from `pg_stats` after ANALYZE; no statistics yet: every term), ranked by
    all the terms."""
    words = {f"t{i}": t for i, t in enumerate(terms)}
    lexemes = ", ".join(f"tsvector_to_array(to_tsvector('english', :{k}))" for k in words)
    row = session.execute(text(f"SELECT ({_COMMON_LEXEMES}), {lexemes}"), words).one()
    common = set(row[0] or ())
    with_lexemes = [(t, lx) for t, lx in zip(terms, row[1:], strict=True) if lx]
    distinctive = [t for t, lx in with_lexemes if not common.issuperset(lx)]
    ranked = [t for t, lx in with_lexemes if " " not in t or not common.issuperset(lx)]
    params["rank"] = tsquery_text(ranked or terms)
    params["match"] = tsquery_text(distinctive) if distinctive else params["rank"]
    return _POSTGRES


def _document_counts(session: Session, terms: list[str]) -> list[int]:
    """How many indexed chunks contain each term (all owners': the statistics bm25 uses)."""
    counts = ", ".join(
        f"(SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH :t{i})" for i in range(len(terms))
    )
    row = session.execute(
        text(f"SELECT {counts}"),
        {f"t{i}": f'"{t}"' for i, t in enumerate(terms)},
    ).one()
    return [int(n) for n in row]


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


# --- statements -----------------------------------------------------------------
# the owner's project's ready files and the chunk sets they are indexed into; on SQLite the
# `+` keeps the planner on the project index (not the status one, which every file shares)
_SCOPE = """WITH scope AS (
    SELECT l.chunk_set_id AS set_id, l.file_id AS file_id, f.filename AS filename
    FROM files f JOIN file_chunk_sets l ON l.file_id = f.id
    WHERE f.project_id = :project_id AND {plus}f.owner_id = :owner_id
    AND {plus}f.status = :ready)"""

_FINISH = """SELECT c.id, s.file_id, s.filename, c.text, c.chunk_index, c.page, c.sheet,
        c.line_start, c.line_end, c.heading, c.token_count, top.score AS score
    FROM top JOIN chunks c ON c.id = top.id JOIN scope s ON s.set_id = c.chunk_set_id
    ORDER BY top.score DESC, c.id, s.file_id"""

_RANKED = f"""SELECT rowid AS id, -bm25(chunks_fts, 1.0, {HEADING_WEIGHT}) AS score
    FROM chunks_fts WHERE chunks_fts MATCH :{{param}}
    AND (rowid >> {CHUNK_INDEX_BITS}) IN (SELECT set_id FROM scope)"""

_SQLITE = text(
    f"""{_SCOPE.format(plus="+")},
    top AS ({_RANKED.format(param="match")} ORDER BY score DESC, id LIMIT :limit)
    {_FINISH}"""
)

_SQLITE_SPLIT = text(
    f"""{_SCOPE.format(plus="+")},
    ranked AS ({_RANKED.format(param="with_common")}
        UNION ALL {_RANKED.format(param="without_common")}),
    top AS (SELECT id, score FROM ranked ORDER BY score DESC, id LIMIT :limit)
    {_FINISH}"""
)

_INDEXED = text("SELECT count(*) FROM chunks_fts_docsize")  # one tiny row per chunk: fast

# lexemes in more than DISTINCTIVE_SHARE of the chunks, from ANALYZE's statistics
_COMMON_LEXEMES = f"""SELECT array_agg(e) FROM pg_stats,
    unnest(most_common_elems::text::text[], most_common_elem_freqs) AS m(e, freq)
    WHERE schemaname = current_schema() AND tablename = 'chunks' AND attname = 'tsv'
    AND freq > {DISTINCTIVE_SHARE}"""

_POSTGRES = text(
    f"""{_SCOPE.format(plus="")},
    top AS (
        SELECT c.id AS id, ts_rank(c.tsv, q.rank, 1) AS score
        FROM (SELECT to_tsquery('english'::regconfig, :match) AS match,
                     to_tsquery('english'::regconfig, :rank) AS rank) q, chunks c
        WHERE c.tsv @@ q.match AND c.chunk_set_id IN (SELECT set_id FROM scope)
        ORDER BY score DESC, c.id LIMIT :limit)
    {_FINISH}"""
)
