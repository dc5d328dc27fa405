"""The bm25 side of project search on PostgreSQL: `tsvector` + GIN (SPEC §8).

`tsv @@ to_tsquery('english', …)` on the GIN index, ranked by `ts_rank(tsv, query, 1)`
(divided by 1 + log(length), like bm25's length norm); the candidates are the chunks with
a distinctive term, ranked by all the terms: a term is common when all its lexemes are
among the column's most common elements (`pg_stats`, kept by ANALYZE) in more than
`DISTINCTIVE_SHARE` of the rows.

Terms are bare lexemes (`word`, `(us <-> east)` for a phrase), OR-ed, bound parameters.
"""

# ruff: noqa: S608 - statements from this module's constants; every value is a parameter

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, text
from sqlmodel import Session

from contextq.retrieval.dense import Ranked
from store.search_bm25 import DISTINCTIVE_SHARE


def tsquery_text(terms: list[str]) -> str:
    """A `to_tsquery` input matching any of `terms`: a phrase's words must be adjacent."""
    return " | ".join(f"({' <-> '.join(t.split())})" if " " in t else t for t in terms)


def postgres_ranked(session: Session, terms: list[str], set_ids: list[int], depth: int) -> Ranked:
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
    params: dict[str, Any] = {"sets": set_ids, "limit": depth}
    params["rank"] = tsquery_text(ranked or terms)
    params["match"] = tsquery_text(distinctive) if distinctive else params["rank"]
    return [(int(r.id), float(r.score)) for r in session.execute(_POSTGRES, params)]


# lexemes in more than DISTINCTIVE_SHARE of the chunks, from ANALYZE's statistics
_COMMON_LEXEMES = f"""SELECT array_agg(e) FROM pg_stats,
    unnest(most_common_elems::text::text[], most_common_elem_freqs) AS m(e, freq)
    WHERE schemaname = current_schema() AND tablename = 'chunks' AND attname = 'tsv'
    AND freq > {DISTINCTIVE_SHARE}"""

_POSTGRES = text(
    """SELECT c.id AS id, ts_rank(c.tsv, q.rank, 1) AS score
    FROM (SELECT to_tsquery('english'::regconfig, :match) AS match,
                 to_tsquery('english'::regconfig, :rank) AS rank) q, chunks c
    WHERE c.tsv @@ q.match AND c.chunk_set_id IN :sets
    ORDER BY score DESC, c.id LIMIT :limit"""
).bindparams(bindparam("sets", expanding=True))
