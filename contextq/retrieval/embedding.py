"""Dense vectors for chunks and queries: WordLlama's static token embeddings, offline.

The model is WordLlama `l2_supercat` at 256 dimensions (MIT licence): a table of one
256-float vector per token of Llama 2's 32 000-token vocabulary, shipped inside the
`wordllama` wheel with its tokenizer (16 MB of weights). Nothing is downloaded: it is
loaded with `disable_download=True` from the package's own directory, and a missing file
is an error, never a fetch. A text's vector is the sum of its tokens' vectors, normalised
to length 1 (WordLlama's average pooling; the average and the sum have one direction).

Speed. Tokenizing with the library costs about 1.8 µs per token: more than the rest of
indexing for a long PDF. A token sequence of Llama's SentencePiece tokenizer is the
concatenation of its words' (each word gets its own `▁`-prefixed pieces), so a word's
summed vector is computed once, by the real tokenizer, and kept in a bounded per-process
table (`WORD_CACHE_MAX` words); a text is then cut into words with one regular expression
and summed from that table. Punctuation is left out (a few tokens' worth of noise in a
vector of hundreds). The vectors match the library's own to a cosine of about 0.99
(checked by `tests/engine/retrieval/test_embedding.py`).

A chunk has one vector per passage (`passages`: its sentences and lines, short fragments
joined), and is scored by its best passage: on bench/retrieval.py's paraphrase set this
takes dense recall@5 from about 0.10 (one vector per chunk: the answer's sentence is
drowned by the rest of the chunk) to about 0.47. Storage: a chunk's passage vectors as
rows of `DIM` signed bytes (256 bytes a passage; `to_bytes`/`from_bytes`): each unit
row scaled so that its largest component is ±127 and rounded. A cosine is taken as the
int8 dot product over the two rows' int8 norms (`contextq.retrieval.dense`): on the
benchmark, recall is that of float32 vectors to the third decimal, and the dense scan
reads a quarter of the bytes. `EMBEDDER` names the model, this way of pooling and this
storage; `LEGACY_EMBEDDERS` the older storage of the same vectors (float16 rows of
migration 0014), read and quantised on load. Vectors of another name are never compared
with these.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from itertools import chain, pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

EMBEDDER = "wordllama-l2_supercat-256-words-i8-v2"
# the same model and pooling, stored as float16 rows (revision 0014): read, quantised
LEGACY_EMBEDDERS = frozenset({"wordllama-l2_supercat-256-words-v1"})
DIM = 256
QUANT = 127  # a row's largest component, in int8
WORD_CACHE_MAX = 100_000  # distinct words whose vectors are kept (100 MB at most)
MIN_PASSAGE_WORDS = 4
MAX_PASSAGES = 48  # per chunk (a 400-token chunk has about 15-25 sentences or rows)
MAX_WORD_CHARS = 48  # a longer "word" (a hash, base64) is cut: its pieces say little

Matrix = npt.NDArray[np.float32]
Int8Matrix = npt.NDArray[np.int8]

_ENDERS = frozenset(".!?;")
_LINE_MARKS = frozenset("|#-*+>•")  # a line starting so stands alone (table, heading, list)

_LOCK = threading.Lock()


class Embedder:
    """WordLlama's token vectors summed per word, and per text (see the module doc)."""

    def __init__(self, table: npt.NDArray[np.float32], tokenizer: Any) -> None:
        self._table = table  # vocabulary by DIM
        self._tokenizer = tokenizer
        self._ids: dict[str, int] = {}  # word -> row of self._words
        self._words = np.zeros((1024, table.shape[1]), np.float32)
        self._count = 0

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One unit-length row per text (a text without words: zeros)."""
        split = [t.split() for t in texts]
        out = np.zeros((len(texts), self._table.shape[1]), np.float32)
        with _LOCK:
            known = self._ids
            self._learn(set(chain.from_iterable(split)).difference(known))
            words = self._words
            for row, text_words in enumerate(split):
                if text_words:  # a gather and a sum per text: faster than numpy's reduceat
                    rows = np.fromiter(map(known.__getitem__, text_words), np.intp)
                    out[row] = words[rows].sum(axis=0)
        return normalise(out)

    def embed_passages(self, texts: Sequence[tuple[list[str], list[int]]]) -> list[Matrix]:
        """Per text (its words and passage ends, `passage_words`), one unit row per passage,
        each text's rows a view of one matrix: one lookup of every word, one gather and one
        small matrix product per text, one normalisation for all."""
        width = self._table.shape[1]
        sizes = [max(1, len(ends)) if words else 1 for words, ends in texts]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        out = np.zeros((int(offsets[-1]), width), np.float32)
        # many small products: one BLAS thread (threads only contend on a busy worker)
        with _LOCK, threadpool_limits(limits=1, user_api="blas"):
            known = self._ids
            self._learn(set(chain.from_iterable(w for w, _ in texts)).difference(known))
            table = self._words
            every = chain.from_iterable(w for w, _ in texts)
            rows = np.fromiter(map(known.__getitem__, every), np.intp)
            start = 0
            for (words, ends), first in zip(texts, offsets[:-1], strict=True):
                if not words:
                    continue
                # passage sums as one small matrix product (an indicator of each word's
                # passage times the words' vectors): numpy's cumsum and reduceat along
                # rows cost ten times more
                owner = np.repeat(np.arange(len(ends)), np.diff([0, *ends]))
                indicator = np.zeros((len(ends), len(words)), np.float32)
                indicator[owner, np.arange(len(words))] = 1.0
                gathered = table[rows[start : start + len(words)]]
                np.matmul(indicator, gathered, out=out[first : first + len(ends)])
                start += len(words)
        normalise(out)
        return [out[a:b] for a, b in pairwise(offsets)]

    def embed_one(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.embed([text])[0]
        return vector

    def _learn(self, words: set[str]) -> None:
        if not words:
            return
        if self._count + len(words) > WORD_CACHE_MAX:
            self._ids.clear()  # rare: start over rather than track recency per word
            self._count = 0
        new = sorted(words)
        cut = [w[:MAX_WORD_CHARS] for w in new]
        encoded = self._tokenizer.encode_batch(cut, add_special_tokens=False)
        need = self._count + len(new)
        if need > len(self._words):
            grown = np.zeros((max(need, 2 * len(self._words)), self._words.shape[1]), np.float32)
            grown[: self._count] = self._words[: self._count]
            self._words = grown
        for offset, (word, enc) in enumerate(zip(new, encoded, strict=True)):
            self._words[self._count + offset] = self._table[enc.ids].sum(axis=0)
            self._ids[word] = self._count + offset
        self._count = need


def normalise(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


_MODEL: Embedder | None = None


def embedder() -> Embedder:
    """The process's embedder, loaded once (≈ 0.3 s) from the wheel's own files."""
    global _MODEL  # noqa: PLW0603 - one model per process
    with _LOCK:
        if _MODEL is None:
            _MODEL = _load()
        return _MODEL


def _load() -> Embedder:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import wordllama  # noqa: PLC0415 - its import calls logging.basicConfig: undone below

    root.handlers[:], root.level = handlers, level
    from wordllama import WordLlama  # noqa: PLC0415

    package = Path(wordllama.__file__).parent
    # cache_dir = the package: weights/ and tokenizers/ are where WordLlama looks in a
    # cache, and disable_download makes a missing file an error instead of a fetch
    model = WordLlama.load(config="l2_supercat", dim=DIM, cache_dir=package, disable_download=True)
    tokenizer = model.tokenizer
    tokenizer.no_padding()
    return Embedder(np.ascontiguousarray(model.embedding, np.float32), tokenizer)


def embed_texts(texts: Sequence[str]) -> Matrix:
    return embedder().embed(texts)


def embed_query(text: str) -> npt.NDArray[np.float32]:
    return embedder().embed_one(text)


def quantise(vectors: Matrix) -> Int8Matrix:
    """Rows scaled so that their largest component is ±QUANT, rounded to int8 (a zero
    row stays zero). The direction is kept to about 0.5 % of the smallest components."""
    peak = np.abs(vectors).max(axis=1, keepdims=True) if len(vectors) else vectors[:, :1]
    scaled = np.divide(vectors * QUANT, peak, out=np.zeros_like(vectors), where=peak > 0)
    return np.rint(scaled).astype(np.int8)


def to_bytes(vectors: Matrix) -> bytes:
    """A chunk's passage vectors as stored: rows of DIM int8 values (`quantise`)."""
    return quantise(np.asarray(vectors, np.float32)).tobytes()


def to_bytes_each(vectors: Sequence[Matrix]) -> list[bytes]:
    """`to_bytes` of each chunk's vectors, quantised in one pass."""
    if not vectors:
        return []
    stored = quantise(np.concatenate(vectors)).tobytes()
    ends = np.cumsum([len(v) * DIM for v in vectors]).tolist()
    return [stored[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def from_bytes(blob: bytes, embedder: str = EMBEDDER) -> Int8Matrix:
    """Stored vectors as an int8 matrix of DIM columns; rows stored by a legacy embedder
    (float16) are quantised as they are read."""
    if embedder in LEGACY_EMBEDDERS:
        return quantise(np.frombuffer(blob, "<f2").reshape(-1, DIM).astype(np.float32))
    return np.frombuffer(blob, np.int8).reshape(-1, DIM)


def passage_words(text: str) -> tuple[list[str], list[int]]:
    """A text's words and where its passages end (word counts, ascending, the last the
    word count): sentences, and lines that stand alone (a table row, a heading, a list
    item, a line before a blank one); a line wrapped inside a sentence (a PDF's text
    layer) does not end one. A passage of fewer than `MIN_PASSAGE_WORDS` words is joined
    to the next (the last to the one before); at most `MAX_PASSAGES`. A chunk is scored
    by its best passage: one sentence that answers a question is not drowned by the
    twenty around it."""
    words: list[str] = []
    ends: list[int] = []
    lines = text.split("\n")
    for number, line in enumerate(lines):
        line_words = line.split()
        for word in line_words:
            words.append(word)
            if word[-1] in _ENDERS and len(words) - (ends[-1] if ends else 0) >= MIN_PASSAGE_WORDS:
                ends.append(len(words))
        following = lines[number + 1].lstrip() if number + 1 < len(lines) else ""
        alone = line.lstrip()[:1] in _LINE_MARKS or following[:1] in _LINE_MARKS or not following
        if line_words and alone and len(words) - (ends[-1] if ends else 0) >= MIN_PASSAGE_WORDS:
            ends.append(len(words))
    if not ends or ends[-1] != len(words):
        if ends and len(words) - ends[-1] < MIN_PASSAGE_WORDS:
            ends[-1] = len(words)
        else:
            ends.append(len(words))
    if len(ends) > MAX_PASSAGES:
        ends[MAX_PASSAGES - 1 :] = [len(words)]
    return words, ends


def passages(text: str) -> list[str]:
    """The passages of `passage_words` as text (words joined by one space)."""
    words, ends = passage_words(text)
    return [" ".join(words[a:b]) for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def chunk_vectors(chunks: Sequence[Any]) -> list[Matrix]:
    """Per chunk, one vector per passage (its heading, when the text does not start
    with it, opens the first passage)."""
    return embedder().embed_passages([passage_words(_with_heading(c)) for c in chunks])


def _with_heading(chunk: Any) -> str:
    text: str = chunk.text
    heading: str | None = chunk.heading
    if not heading or text.lstrip("# ").startswith(heading):
        return text
    return f"{heading}\n{text}"
