"""A generated retrieval corpus with known answers (for bench/retrieval.py).

Five generators, each with its own vocabulary and several sentence templates per fact, so
chunks of one kind share most of their words and differ in a few: product sheets,
incident post-mortems, contract clauses, source code with docstrings, support articles.
Each chunk also carries filler sentences of its kind (background, boilerplate) drawn from
the same vocabulary, so a query has to combine terms to find its chunk.

A query is written for one chunk from facts whose combination is unique in the corpus; it
paraphrases (synonyms, question form, other word order, dropped words) rather than copying
the chunk's sentences, and some queries use a rare identifier alone.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from bench.retrieval_kinds import (
    Doc,
    Option,
    code,
    code_queries,
    contract,
    contract_queries,
    incident,
    incident_queries,
    product,
    product_queries,
    support,
    support_queries,
)


@dataclass(frozen=True)
class Query:
    text: str
    answer: int  # index of the answer chunk in the corpus


Generator = Callable[[random.Random, int], Doc]
QueryWriter = Callable[[dict[str, str]], list[Option]]
KINDS: list[tuple[Generator, QueryWriter]] = [
    (product, product_queries),
    (incident, incident_queries),
    (contract, contract_queries),
    (code, code_queries),
    (support, support_queries),
]
ID_QUERY_SHARE = 0.2  # at most this share of queries name a unique identifier alone


def build(n_chunks: int, n_queries: int, *, seed: int = 20261123) -> tuple[list[Doc], list[Query]]:
    """`n_chunks` documents (one chunk each) and `n_queries` queries with their answer: each
    query names facts that no other chunk of its kind has in that combination."""
    rng = random.Random(seed)
    docs = [KINDS[i % len(KINDS)][0](rng, i) for i in range(n_chunks)]
    queries: list[Query] = []
    per_kind = n_queries // len(KINDS)
    for k, (_, writer) in enumerate(KINDS):
        members = list(range(k, n_chunks, len(KINDS)))
        options = {i: writer(docs[i].facts) for i in members}
        counts = Counter(key for opts in options.values() for _, key, _ in opts)
        rng.shuffle(members)
        by_id = 0
        for i in members:
            unique = [o for o in options[i] if counts[o[1]] == 1]
            worded = [o for o in unique if not o[2]]
            if worded and (by_id >= per_kind * ID_QUERY_SHARE or rng.random() > ID_QUERY_SHARE):
                queries.append(Query(rng.choice(worded)[0], i))
            elif unique and by_id < per_kind * ID_QUERY_SHARE:
                queries.append(Query(rng.choice(unique)[0], i))
                by_id += not worded
            if len(queries) == (k + 1) * per_kind:
                break
    return docs, queries
