"""The bm25 side of project search on PostgreSQL: `tsvector` + GIN to find, bm25 to rank
(docs/projects.md).

`ts_rank` is not bm25: it knows neither how rare a term is in the collection nor the
average length, so a chunk that repeats a common word beats the one with the rare word
asked for (recall@5 0.91 where SQLite's FTS5 bm25 has 0.965 on bench/retrieval.py). So:

1. Candidates: the chunks of the scope whose `tsv` matches a *distinctive* term of the
   query (GIN index; a term is common when all its lexemes are among the column's most
   common elements in more than `DISTINCTIVE_SHARE` of the rows, from `pg_stats` after
   ANALYZE; no statistics yet: every term), the best `CANDIDATES` by `ts_rank`, each
   with its `tsv` as text and its length (`token_count`).
2. Ranking: Okapi bm25 (k1 1.2, b 0.75, as FTS5) over all the query's lexemes, in this
   process: a lexeme's frequency in a chunk is the number of its positions in the chunk's
   `tsv`; its document frequency is counted exactly on the GIN index when it is rare (in
   the candidates' statement, and remembered until the statistics are read again), and
   taken from `pg_stats` (frequency times rows) when it is common — what FTS5 does with
   its own statistics, over every owner's chunks like FTS5; the collection's size and
   average length are read once a minute.

Two round trips: the query's lexemes (and the planner settings of the transaction: a plan
for these terms, and the GIN index rather than a scan of every chunk's tsvector), then the
candidates with the missing counts.

Terms are bare lexemes (`word`, `(us <-> east)` for a phrase), OR-ed, bound parameters.
"""

# ruff: noqa: S608 - statements from this module's constants; every value is a parameter

from __future__ import annotations

import math
import re
import threading
import time
from typing import Any

from sqlalchemy import text
from sqlmodel import Session

from contextq.retrieval.dense import Ranked
from store.search_bm25 import DISTINCTIVE_SHARE

K1, B = 1.2, 0.75
CANDIDATES = 200  # ranked by ts_rank, then re-ranked by bm25
STATS_TTL_S = 60.0
MAX_COUNTED = 50_000  # rare lexemes' counts kept per process until the statistics expire
MAX_TERMS = 50_000  # query terms whose lexemes are kept per process

_LEXEME = re.compile(r"'((?:[^']|'')+)':([0-9A-D,]+)")


def tsquery_text(terms: list[str]) -> str:
    """A `to_tsquery` input matching any of `terms`: a phrase's words must be adjacent."""
    return " | ".join(f"({' <-> '.join(t.split())})" if " " in t else t for t in terms)


def postgres_ranked(session: Session, terms: list[str], set_ids: list[int], depth: int) -> Ranked:
    """The best `depth` chunks of `set_ids` for `terms` by bm25 (see the module doc)."""
    row = term_lexemes(session, terms)
    stats = _stats(session)
    with_lexemes = [(t, list(lx)) for t, lx in zip(terms, row, strict=True) if lx]
    if not with_lexemes:
        return []
    distinctive = [t for t, lx in with_lexemes if not stats.common.keys() >= set(lx)]
    ranked_terms = [t for t, lx in with_lexemes if " " not in t or t in distinctive]
    query_lexemes = sorted({lx for t, lxs in with_lexemes if " " not in t for lx in lxs})
    df, uncounted = stats.known_frequencies(query_lexemes)
    counts = "".join(
        f", (SELECT count(*) FROM chunks WHERE tsv @@ CAST(%(l{i})s AS tsquery)) AS d{i}"
        for i in range(len(uncounted))
    )
    params: dict[str, Any] = {"sets": set_ids, "limit": max(CANDIDATES, depth)}
    params.update({f"l{i}": "'" + lx.replace("'", "''") + "'" for i, lx in enumerate(uncounted)})
    params["lexemes"] = query_lexemes
    params["rank"] = tsquery_text(ranked_terms or terms)
    params["match"] = tsquery_text(distinctive) if distinctive else params["rank"]
    candidates = _planned(session, _CANDIDATES.format(counts=counts), params)
    if not candidates:
        return []
    counted = {lx: float(candidates[0][3 + i]) for i, lx in enumerate(uncounted)}
    stats.remember(counted)
    df.update(counted)
    scored = [(int(c[0]), _bm25(c[2], c[1], df, stats)) for c in candidates]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored[:depth]


def _planned(session: Session, statement: str, params: dict[str, Any]) -> list[Any]:
    """The rows of `statement` run under the planner settings full-text search needs, in
    one round trip (psycopg's pipeline: the settings, the statement, the settings reset):
    a plan made for these very terms (not a prepared generic one), and the GIN index even
    where the planner would scan the table (testing every chunk's tsvector: 12 ms instead
    of 2 for a query matching 1 300 of 8 000 chunks). The reset keeps the rest of the
    transaction (a context read's) on the usual plans."""
    driver: Any = session.connection().connection.driver_connection
    with driver.pipeline(), driver.cursor() as cursor:
        cursor.execute(_PLANNER_SET)
        cursor.execute(statement, params)
        rows: list[Any] = cursor.fetchall()
        cursor.execute(_PLANNER_RESET)
    return rows


def term_lexemes(session: Session, terms: list[str]) -> list[list[str]]:
    """Each term's lexemes by the english configuration (the tsv column's), remembered per
    process: a term always gives the same lexemes, and a search whose terms are all known
    saves a round trip."""
    with _LOCK:
        known = {t: _LEXEMES[t] for t in terms if t in _LEXEMES}
    missing = [t for t in terms if t not in known]
    if missing:
        words = {f"t{i}": t for i, t in enumerate(missing)}
        columns = ", ".join(f"tsvector_to_array(to_tsvector('english', :{k}))" for k in words)
        row = session.execute(text(f"SELECT {columns}"), words).one()
        with _LOCK:
            if len(_LEXEMES) + len(missing) > MAX_TERMS:
                _LEXEMES.clear()
            for term, lexemes in zip(missing, row, strict=True):
                known[term] = _LEXEMES[term] = list(lexemes)
    return [known[t] for t in terms]


def _bm25(tsv: str, length: int, df: dict[str, float], stats: _Stats) -> float:
    """Okapi bm25 of one chunk (its `tsv` as text, its length in tokens)."""
    frequencies = {m.group(1).replace("''", "'"): m.group(2).count(",") + 1
                   for m in _LEXEME.finditer(tsv) if m.group(1) in df}  # fmt: skip
    norm = K1 * (1 - B + B * max(length, 1) / stats.average_length)
    score = 0.0
    for lexeme, tf in frequencies.items():
        n = min(df[lexeme], stats.rows)
        idf = math.log((stats.rows - n + 0.5) / (n + 0.5) + 1)
        score += idf * tf * (K1 + 1) / (tf + norm)
    return score


class _Stats:
    """The collection's statistics, read at most every STATS_TTL_S seconds per process."""

    def __init__(self, common: dict[str, float], rows: float, average_length: float) -> None:
        self.common = common  # lexeme -> share of rows holding it (pg_stats, > the share)
        self.rows = max(rows, 1.0)
        self.average_length = max(average_length, 1.0)
        self.read_at = time.monotonic()
        self._counted: dict[str, float] = {}  # rare lexemes' exact counts, until the TTL

    def known_frequencies(self, lexemes: list[str]) -> tuple[dict[str, float], list[str]]:
        """(document frequencies known now, the lexemes still to count): a common
        lexeme's from pg_stats (an exact count would read a large part of the index), a
        rare one's as counted on the GIN index by an earlier search."""
        known: dict[str, float] = {}
        uncounted: list[str] = []
        for lexeme in lexemes:
            if lexeme in self.common:
                known[lexeme] = self.common[lexeme] * self.rows
            elif lexeme in self._counted:
                known[lexeme] = self._counted[lexeme]
            else:
                uncounted.append(lexeme)
        return known, uncounted

    def remember(self, counted: dict[str, float]) -> None:
        if len(self._counted) < MAX_COUNTED:
            self._counted.update(counted)


_CACHE: dict[str, _Stats] = {}
_LEXEMES: dict[str, list[str]] = {}
_LOCK = threading.Lock()


def _stats(session: Session) -> _Stats:
    key = str(session.get_bind().engine.url)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and time.monotonic() - cached.read_at < STATS_TTL_S:
        return cached
    common_rows = session.execute(text(_COMMON_LEXEMES)).all()
    rows, average = session.execute(_SIZES).one()
    stats = _Stats({r.e: float(r.freq) for r in common_rows}, float(rows or 0), float(average or 0))
    with _LOCK:
        _CACHE[key] = stats
    return stats


def forget_stats() -> None:
    """Read the statistics again at the next search (after a bulk load and ANALYZE)."""
    with _LOCK:
        _CACHE.clear()


# lexemes in more than DISTINCTIVE_SHARE of the chunks, from ANALYZE's statistics
_COMMON_LEXEMES = f"""SELECT e, freq FROM pg_stats,
    unnest(most_common_elems::text::text[], most_common_elem_freqs) AS m(e, freq)
    WHERE schemaname = current_schema() AND tablename = 'chunks' AND attname = 'tsv'
    AND e IS NOT NULL AND freq > {DISTINCTIVE_SHARE}"""

# the chunks and their average length, from the chunk sets (a row per indexed content)
_SIZES = text(
    "SELECT sum(chunk_count), sum(token_count) * 1.0 / nullif(sum(chunk_count), 0) FROM chunk_sets"
)

_PLANNER_SET = (
    "SELECT set_config('plan_cache_mode', 'force_custom_plan', true), "
    "set_config('enable_seqscan', 'off', true)"
)
_PLANNER_RESET = (
    "SELECT set_config('plan_cache_mode', NULL, true), set_config('enable_seqscan', NULL, true)"
)

# the candidates, each with its tsvector cut to the query's lexemes (weight D marks them,
# ts_filter keeps them: a few bytes to parse instead of the chunk's whole tsvector), and
# (`{counts}`) the exact counts of the rare lexemes not counted yet, each evaluated once
# (uncorrelated subqueries) and repeated on every row
# (psycopg's own parameters: the statement goes to the driver, in its pipeline)
_CANDIDATES = """SELECT c.id AS id, c.token_count AS token_count,
        ts_filter(setweight(c.tsv, 'D', CAST(%(lexemes)s AS text[])), '{{d}}')::text AS tsv{counts}
    FROM (SELECT to_tsquery('english'::regconfig, %(match)s) AS match,
                 to_tsquery('english'::regconfig, %(rank)s) AS rank) q, chunks c
    WHERE c.tsv @@ q.match AND c.chunk_set_id = ANY(%(sets)s)
    ORDER BY ts_rank(c.tsv, q.rank, 1) DESC, c.id LIMIT %(limit)s"""
