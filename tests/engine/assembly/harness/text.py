"""Deterministic text for the generated cases: prose, code, logs and JSON sliced from
corpora built once per process (slicing is what keeps 10 000 cases fast).

Every message the generators make starts with a marker `[#m<seq>]` so an invariant can
find it in an answer, whatever the format and however it was cut from the end.
"""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache

MARKER = re.compile(r"\[#m(\d+)\]")
CHARS_PER_TOKEN = 4.4  # the corpora's prose, measured in cl100k/o200k (about)

_WORDS = (
    "agent",
    "reads",
    "the",
    "config",
    "file",
    "parser",
    "error",
    "timeout",
    "decided",
    "retry",
    "database",
    "schema",
    "index",
    "query",
    "user",
    "wants",
    "report",
    "summary",
    "latency",
    "cache",
    "worker",
    "queue",
    "deploy",
    "migration",
    "test",
    "build",
    "fails",
    "because",
    "the",
    "fixture",
    "path",
    "is",
    "wrong",
    "so",
    "we",
    "patch",
    "it",
    "and",
    "rerun",
    "pytest",
    "again",
    "after",
    "reading",
    "the",
    "traceback",
    "carefully",
    "line",
    "by",
    "line",
    "über",
    "naïve",
    "café",
    "東京",
    "résumé",
)

_CODE = (
    "def handle(request):\n    value = request.get('key')\n    if value is None:\n"
    "        raise KeyError('key')\n    return {'ok': True, 'value': value}\n",
    "for i, row in enumerate(rows):\n    total += row['amount'] * rate[i % 7]\n",
    "class Cache:\n    def __init__(self):\n        self._items = {}\n",
    "    assert parse('2024-01-01') == date(2024, 1, 1)\n",
    "ERROR 2024-05-01T10:00:03Z worker-3 task=process_file id=7 Timeout after 300s\n",
    '  File "/app/src/parser.py", line 42, in parse\n    return int(text)\n',
)


def marker(seq: int) -> str:
    return f"[#m{seq}] "


@lru_cache(maxsize=1)
def _prose() -> str:
    rng = random.Random(20_261_123)
    words = [rng.choice(_WORDS) for _ in range(240_000)]
    for i in range(0, len(words), 17):
        words[i] = words[i].capitalize()
    return " ".join(words)


@lru_cache(maxsize=1)
def _code() -> str:
    rng = random.Random(20_261_124)
    return "".join(rng.choice(_CODE) for _ in range(12_000))


@lru_cache(maxsize=1)
def _json() -> str:
    rng = random.Random(20_261_125)
    rows = [
        {
            "id": i,
            "name": rng.choice(_WORDS),
            "score": round(rng.random() * 100, 2),
            "tags": [rng.choice(_WORDS) for _ in range(rng.randrange(1, 4))],
        }
        for i in range(14_000)
    ]
    return json.dumps(rows, ensure_ascii=False, indent=1)


def _slice(corpus: str, rng: random.Random, chars: int) -> str:
    chars = max(1, min(chars, len(corpus) - 1))
    start = rng.randrange(0, len(corpus) - chars)
    return corpus[start : start + chars]


def text_of(rng: random.Random, tokens: int, kind: str = "prose") -> str:
    """About `tokens` tokens of `kind` text (prose, code, json)."""
    corpus = {"prose": _prose, "code": _code, "json": _json}[kind]()
    return _slice(corpus, rng, int(tokens * CHARS_PER_TOKEN))


def sized_tokens(rng: random.Random, upper: int) -> int:
    """A token size up to `upper`, skewed small (log-uniform) as real messages are."""
    upper = max(2, upper)
    return max(1, min(upper, int(2 ** rng.uniform(1, max(1.0, upper.bit_length())))))
