"""The fusion grid for bench/retrieval.py (`--fusion-grid`): recall@5 of reciprocal rank
fusion of the stored bm25 and dense rankings (depth 50) for several `k` and fixed dense
weights, then recall@5 and MRR@10 of the bm25 weight set by how sharply the bm25 ranking
picks its head (`contextq.retrieval.dense.bm25_head_weight`) around the chosen values, on
both query sets, SQLite, in one run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.retrieval_corpus import Query
from contextq.retrieval.dense import bm25_head_weight, fuse

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
                    answer
                    in [
                        doc(c)
                        for c, _ in fuse(bm, de, k=k, bm25_weight=1.0, dense_weight=weight)[:5]
                    ]
                    for bm, de, answer in rows
                )
                line += f"  {name} {found / len(rows):.3f}"
            print(line)
    print("\nthe bm25 ranking's weight by how sharply it picks its head (k 10; recall@5, MRR@10)")
    for sharp in (0.15, 0.2, 0.25):
        for floor in (0.4, 0.5, 0.6):
            line = f"  sharp head {sharp:.2f}, weight at least {floor:.1f}:"
            for name, rows in runs.items():
                r5, mrr = _scores(rows, doc, _head_fused(sharp, floor))
                line += f"  {name} {r5:.3f} {mrr:.3f}"
            print(line)
    line = "  fixed weight 1.0:"
    for name, rows in runs.items():
        r5, mrr = _scores(rows, doc, lambda bm, de: fuse(bm, de, bm25_weight=1.0))
        line += f"  {name} {r5:.3f} {mrr:.3f}"
    print(line)


def _head_fused(sharp: float, floor: float) -> Any:
    def fused(bm: Any, de: Any) -> Any:
        return fuse(bm, de, bm25_weight=bm25_head_weight(bm, sharp=sharp, floor=floor))

    return fused


def _scores(rows: Any, doc: Any, fused: Any) -> tuple[float, float]:
    found = mrr = 0.0
    for bm, de, answer in rows:
        docs = [doc(c) for c, _ in fused(bm, de)[:10]]
        found += answer in docs[:5]
        mrr += 1 / (docs.index(answer) + 1) if answer in docs else 0.0
    return found / len(rows), mrr / len(rows)
