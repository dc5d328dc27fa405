"""The bm25 side of project search, in the database's own full-text engine (docs/retrieval.md).

`fts5_ranked(session, terms, set_ids, depth)` gives the ids and scores (higher is better)
of the best `depth` chunks of the given chunk sets that match the query's terms
(`store.search.bm25_ranked` picks it or PostgreSQL's `postgres_ranked` by the database).

SQLite: FTS5 ranked by `bm25()` (text column weight 1, heading `HEADING_WEIGHT`), score
`-bm25`. Only rows of the given chunk sets are ranked (a chunk id's high bits are its
set: no lookup per matching row). A query's terms are split by how many indexed chunks
contain them (one cheap count each): the candidates are the chunks with at least one
*distinctive* term (in at most `DISTINCTIVE_SHARE` of the chunks), each scored by bm25
over *all* the terms — as two FTS5 queries, `(distinctive) AND (common)` and
`(distinctive) NOT (common)`, so no term is counted twice; a common phrase is left out
(its words are terms already). Chunks with only common terms are not ranked at all: this
keeps search to a few milliseconds, and can only move an answer that has a distinctive
term up, never down. A query with no distinctive term is ranked over all its matches.

PostgreSQL: see `store/search_postgres.py`.

The query text is user input. It never reaches the engine as syntax: its terms
(`contextq.retrieval.search_terms`: words and phrases of letters and digits) are each
quoted (FTS5 `"word"`, `"us east 1"`), OR-ed, and passed as bound parameters.
"""

# S608: the statements below are built from this module's constants only; every value
# (ids, the MATCH texts, the limit) is a bound parameter.
# ruff: noqa: S608

from __future__ import annotations

from typing import Any

from sqlalchemy import TextClause, bindparam, text
from sqlmodel import Session

from contextq.retrieval.dense import Ranked
from store.project_tables import CHUNK_INDEX_BITS

HEADING_WEIGHT = 0.5
DISTINCTIVE_SHARE = 0.05


def fts5_match(terms: list[str]) -> str:
    """An FTS5 query matching any of `terms` (words, or phrases of words separated by a
    space); quoted, so nothing in them is syntax."""
    return " OR ".join(f'"{t}"' for t in terms)


def fts5_ranked(session: Session, terms: list[str], set_ids: list[int], depth: int) -> Ranked:
    """The best `depth` chunks of `set_ids` for `terms`, best first (maybe none), on SQLite."""
    params: dict[str, Any] = {"sets": set_ids, "limit": depth}
    stmt = _sqlite_statement(session, terms, params)
    if stmt is None:
        return []
    return [(int(row.id), float(row.score)) for row in session.execute(stmt, params)]


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


_RANKED = f"""SELECT rowid AS id, -bm25(chunks_fts, 1.0, {HEADING_WEIGHT}) AS score
    FROM chunks_fts WHERE chunks_fts MATCH :{{param}}
    AND (rowid >> {CHUNK_INDEX_BITS}) IN :sets"""

_SQLITE = text(
    f"""{_RANKED.format(param="match")} ORDER BY score DESC, id LIMIT :limit"""
).bindparams(bindparam("sets", expanding=True))

_SQLITE_SPLIT = text(
    f"""WITH ranked AS ({_RANKED.format(param="with_common")}
        UNION ALL {_RANKED.format(param="without_common")})
    SELECT id, score FROM ranked ORDER BY score DESC, id LIMIT :limit"""
).bindparams(bindparam("sets", expanding=True))

_INDEXED = text("SELECT count(*) FROM chunks_fts_docsize")  # one tiny row per chunk: fast
