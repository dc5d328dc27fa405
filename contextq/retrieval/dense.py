"""Dense ranking of a project's chunks, and the fusion of two rankings (docs/retrieval.md, hybrid).

Dense: brute force, exact over the stored int8 rows; a chunk scores its best passage's
cosine. Each chunk set's passage vectors (int8 rows as stored, and each row's inverse
norm) are loaded once per process and kept in `SetVectors`, an LRU bounded by bytes
(`DEFAULT_CACHE_BYTES`, 256 MB per process: about a million passages, 60 000 chunks); a
set's vectors never change (a set is keyed by its bytes, chunker and embedder), so the
cache needs no invalidation. A query is quantised like the rows, and scored against each
set by simsimd's int8 dot products (SIMD, one thread: about 0.5 ms for the 64 000
passages of 4 000 chunks, where numpy's float32 product over the same vectors reads four
times the bytes and took 10 ms), each scaled by the two norms, a maximum per chunk and a
partial sort.

Fusion: reciprocal rank fusion (Cormack et al., 2009): a chunk's score is the sum over the
rankings of `weight / (k + rank)`. It needs no calibration between a bm25 score and a
cosine, and a chunk found by both rankings rises above one found by either alone.
`RRF_K` 10 and equal weights were chosen on bench/retrieval.py's grid (`--fusion-grid`):
on its 4 000-chunk corpus k 10 gave lexical recall@5 0.880 and paraphrase 0.430, the
customary k 60 0.830 and 0.400; a heavier dense weight gains paraphrases and loses
lexical queries, a lighter one the reverse (the grid is measured on the benchmark's own
queries: a choice, not an independent validation).

The bm25 ranking's weight follows how sharply it picks its head: a query that shares no
content word with its answer (a paraphrase) still matches chunks on common words, and
those score nearly alike; a query whose rare words hit a chunk gives a head that stands
out. The weight is 1 when the tenth bm25 score (or the last, with fewer hits; a single
hit is as sharp as it gets) is at most 80 % of the first, falling linearly to
`MIN_BM25_WEIGHT` (0.5) as the scores flatten (`bm25_head_weight`). On the benchmark
(SQLite) it raised paraphrase MRR@10 from 0.245 to 0.309 and recall@5 from 0.439 to
0.448, lexical MRR from 0.718 to 0.723 at the same recall@5 0.885 (`--fusion-grid`
prints the neighbours of the choice).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import simsimd

from contextq.retrieval.embedding import Int8Matrix, Matrix, quantise

RRF_K = 10
BM25_WEIGHT = 1.0
DENSE_WEIGHT = 1.0
MIN_BM25_WEIGHT = 0.5  # a flat bm25 head (a paraphrase matched on common words)
SHARP_HEAD = 0.2  # full weight when the tenth score is at most 1 - this of the first
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024

Ranked = list[tuple[int, float]]  # (chunk id, score), best first


@dataclass(frozen=True, slots=True)
class SetMatrix:
    """One chunk set's passage vectors: the chunk `ids[i]` owns the rows from `starts[i]`
    to the next start (every chunk at least one); `vectors` int8 rows as stored,
    `inverse_norms` one over each row's norm (0 for a zero row)."""

    ids: npt.NDArray[np.int64]
    starts: npt.NDArray[np.intp]
    vectors: Int8Matrix
    inverse_norms: Matrix

    @classmethod
    def of(
        cls, ids: npt.NDArray[np.int64], starts: npt.NDArray[np.intp], vectors: Int8Matrix
    ) -> SetMatrix:
        norms = np.linalg.norm(vectors.astype(np.float32), axis=1)
        inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return cls(ids, starts, np.ascontiguousarray(vectors), inverse.astype(np.float32))

    @property
    def nbytes(self) -> int:
        sizes = (self.ids, self.starts, self.vectors, self.inverse_norms)
        return int(sum(a.nbytes for a in sizes))

    def chunk_scores(self, query: Int8Matrix, query_norm: float) -> npt.NDArray[np.float64]:
        """Each chunk's best passage's cosine with `query` (an int8 row, `quantise`)."""
        dots = np.asarray(simsimd.cdist(query, self.vectors, metric="dot", threads=1))[0]
        return np.maximum.reduceat(dots * self.inverse_norms / query_norm, self.starts)


# a set is cached under (its id, its key): an id alone can be reused (SQLite gives a
# deleted set's id to the next one), its key (bytes + chunker) says what it holds
SetKey = tuple[int, str]
Loader = Callable[[list[SetKey]], dict[SetKey, SetMatrix]]


class SetVectors:
    """Per-process cache of chunk sets' vectors, least recently used out first."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._sets: OrderedDict[SetKey, SetMatrix] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, sets: Iterable[SetKey], load: Loader) -> list[SetMatrix]:
        """The vectors of `sets` (a set `load` does not return has none: left out)."""
        wanted = list(dict.fromkeys(sets))
        with self._lock:
            found = {i: self._touch(i) for i in wanted if i in self._sets}
        missing = [i for i in wanted if i not in found]
        if missing:
            loaded = load(missing)
            with self._lock:
                for set_id, matrix in loaded.items():
                    self._put(set_id, matrix)
            found.update(loaded)
        return [found[i] for i in wanted if i in found]

    def clear(self) -> None:
        with self._lock:
            self._sets.clear()
            self._bytes = 0

    def _touch(self, set_id: SetKey) -> SetMatrix:
        self._sets.move_to_end(set_id)
        return self._sets[set_id]

    def _put(self, set_id: SetKey, matrix: SetMatrix) -> None:
        if set_id in self._sets:
            return
        self._sets[set_id] = matrix
        self._bytes += matrix.nbytes
        while self._bytes > self.max_bytes and len(self._sets) > 1:
            _, dropped = self._sets.popitem(last=False)
            self._bytes -= dropped.nbytes


def dense_top(matrices: Sequence[SetMatrix], query: npt.NDArray[np.float32], n: int) -> Ranked:
    """The `n` chunks most similar to `query` (cosine), best first (ties: the lower id)."""
    if n < 1 or not matrices or not query.any():
        return []
    query8 = quantise(query.reshape(1, -1).astype(np.float32))
    norm = float(np.linalg.norm(query8.astype(np.float32)))
    scores = np.concatenate([m.chunk_scores(query8, norm) for m in matrices])
    ids = np.concatenate([m.ids for m in matrices])
    best = np.argpartition(-scores, n - 1)[:n] if len(scores) > n else np.arange(len(scores))
    order = best[np.lexsort((ids[best], -scores[best]))]
    return [(int(ids[i]), float(scores[i])) for i in order]


def bm25_head_weight(
    bm25: Ranked, *, sharp: float = SHARP_HEAD, floor: float = MIN_BM25_WEIGHT
) -> float:
    """The bm25 ranking's weight in the fusion: how far its tenth score (the last, with
    fewer hits) falls below its first (scores best first, of either sign); `sharp` and
    `floor` for the benchmark's grid."""
    if len(bm25) < 2 or not bm25[0][1]:
        return BM25_WEIGHT  # one chunk holds the query's words: as sharp as it gets
    flatness = abs(bm25[min(9, len(bm25) - 1)][1]) / abs(bm25[0][1])
    return BM25_WEIGHT * max(floor, min(1.0, (1.0 - flatness) / sharp))


def fuse(
    bm25: Ranked,
    dense: Ranked,
    *,
    k: int = RRF_K,
    bm25_weight: float | None = None,
    dense_weight: float = DENSE_WEIGHT,
) -> Ranked:
    """Reciprocal rank fusion of two rankings, best first (ties: the lower id); the bm25
    ranking weighs `bm25_head_weight(bm25)` unless a weight is given."""
    if bm25_weight is None:
        bm25_weight = bm25_head_weight(bm25)
    fused: dict[int, float] = {}
    for ranking, weight in ((bm25, bm25_weight), (dense, dense_weight)):
        for rank, (chunk_id, _score) in enumerate(ranking, 1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
