"""The fusion grid for bench/retrieval.py (`--fusion-grid`): recall@5 of reciprocal rank
fusion of the stored bm25 and dense rankings (depth 50) for several `k` and dense weights,
on both query sets, SQLite, in one run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.retrieval_corpus import Query
from contextq.retrieval.dense import fuse

GRID_K = (10, 30, 60)
GRID_WEIGHTS = (0.5, 1.0, 1.5, 2.0)
DEPTH = 50


def _rankings(session: Any, query: Query, sets: list[tuple[int, str]]) -> tuple[Any, Any, int]:
    from store.search import rank

    bm25 = rank(session, query.text, sets, DEPTH, "bm25")
    return bm25, rank(session, query.text, sets, DEPTH, "dense"), query.answer


def fusion_grid(
    owner_id: str,
    project_id: str,
    where: dict[tuple[str, int], int],
    query_sets: dict[str, Sequence[Query]],
) -> None:
    from store.db import read_session
    from store.search import project_scope

    with read_session() as s:
        scope = project_scope(s, owner_id=owner_id, project_id=project_id)
        sets = sorted({(f.set_id, f.set_key) for f in scope})
        file_of = {f.set_id: f.file_id for f in scope}
        runs = {name: [_rankings(s, q, sets) for q in qs] for name, qs in query_sets.items()}

    def doc(chunk: int) -> int:
        return where[(file_of[chunk >> 20], chunk & ((1 << 20) - 1))]

    print("\nfusion grid (SQLite; recall@5 of RRF over the bm25 and dense rankings to depth 50)")
    for k in GRID_K:
        for weight in GRID_WEIGHTS:
            line = f"  k {k:3d}, dense weight {weight:4.2f}:"
            for name, rows in runs.items():
                found = sum(
                    answer in [doc(c) for c, _ in fuse(bm, de, k=k, dense_weight=weight)[:5]]
                    for bm, de, answer in rows
                )
                line += f"  {name} {found / len(rows):.3f}"
            print(line)
