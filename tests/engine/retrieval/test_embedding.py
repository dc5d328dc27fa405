"""The dense side of retrieval: WordLlama's packaged static embeddings, offline; passages;
the dense ranking and the fusion of two rankings."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass

import numpy as np
import pytest

from contextq.retrieval import embedding
from contextq.retrieval.dense import SetMatrix, SetVectors, bm25_head_weight, dense_top, fuse


def test_the_model_loads_and_embeds_with_no_network_at_all() -> None:
    """Every socket refuses: loading the model and embedding must not need one."""
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network used")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from contextq.retrieval import embedding
        vectors = embedding.embed_texts(["equipment damage is covered by the employer"])
        print(vectors.shape, round(float((vectors[0] ** 2).sum()), 3))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 256) 1.0"


def test_vectors_are_unit_length_and_a_paraphrase_is_nearer_than_an_unrelated_text() -> None:
    texts = [
        "Equipment damage is covered by the employer when it happens during normal duties.",
        "The cafeteria opens at eight and closes at three.",
        "",
    ]
    vectors = embedding.embed_texts(texts)
    assert vectors.shape == (3, embedding.DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()  # no words: zeros, never NaN
    query = embedding.embed_query("who pays if my work laptop breaks")
    assert float(vectors[0] @ query) > float(vectors[1] @ query)


def test_word_pooling_matches_the_library_tokenizing_whole_texts() -> None:
    """A text's vector from cached word vectors equals WordLlama's own pooling of the
    text's tokens, up to the newline tokens the words leave out."""
    model = embedding.embedder()
    text = "Passwords must be rotated every ninety days, and contain twelve characters."
    ids = model._tokenizer.encode(text, add_special_tokens=False).ids
    reference = embedding.normalise(model._table[ids].sum(axis=0, keepdims=True))[0]
    assert float(embedding.embed_query(text) @ reference) > 0.999


def test_stored_bytes_are_int8_rows_that_keep_the_direction() -> None:
    vectors = embedding.embed_texts(["one sentence here", "another sentence there", ""])
    blob = embedding.to_bytes(vectors)
    assert len(blob) == 3 * embedding.DIM  # a byte per dimension
    stored = embedding.from_bytes(blob)
    assert stored.dtype == np.int8 and stored.shape == (3, embedding.DIM)
    assert np.abs(stored[:2]).max(axis=1).tolist() == [embedding.QUANT, embedding.QUANT]
    assert not stored[2].any()  # no words: zeros
    cosines = (embedding.normalise(stored[:2].astype(np.float32)) * vectors[:2]).sum(axis=1)
    assert cosines.min() > 0.999


def test_float16_rows_of_the_legacy_embedder_are_read_as_int8() -> None:
    vectors = embedding.embed_texts(["equipment damage is covered by the employer"])
    legacy = np.asarray(vectors, "<f2").tobytes()  # revision 0014's storage
    (name,) = embedding.LEGACY_EMBEDDERS
    read = embedding.from_bytes(legacy, name)
    assert read.dtype == np.int8 and read.shape == (1, embedding.DIM)
    fresh = embedding.from_bytes(embedding.to_bytes(vectors)).astype(int)
    assert np.abs(read.astype(int) - fresh).max() <= 1  # float16 rounding, then int8


def test_passages_are_sentences_and_lines_with_short_fragments_joined() -> None:
    text = (
        "Intro.\nThe first sentence has enough words. Short one! Then a third sentence ends here."
    )
    parts = embedding.passages(text)
    assert parts[0] == "Intro. The first sentence has enough words."
    assert all(len(p.split()) >= embedding.MIN_PASSAGE_WORDS for p in parts)
    assert " ".join(parts).split() == text.split()
    long = " ".join(f"Sentence number {i} is here." for i in range(200))
    assert len(embedding.passages(long)) == embedding.MAX_PASSAGES
    assert embedding.passages("") == [""]


def matrix(ids: list[int], sizes: list[int], rng: np.random.Generator) -> SetMatrix:
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    vectors = embedding.normalise(rng.standard_normal((sum(sizes), 8)).astype(np.float32))
    return SetMatrix.of(np.array(ids, np.int64), starts, embedding.quantise(vectors))


def test_dense_top_scores_a_chunk_by_its_best_passage() -> None:
    rng = np.random.default_rng(3)
    a, b = matrix([10, 11, 12], [2, 3, 1], rng), matrix([20, 21], [4, 2], rng)
    query = embedding.normalise(b.vectors[4:5].astype(np.float32))[0]  # chunk 21's first
    ranked = dense_top([a, b], query, 3)
    assert ranked[0] == (21, pytest.approx(1.0, abs=1e-5))
    rows = {m.ids[0]: embedding.normalise(m.vectors.astype(np.float32)) for m in (a, b)}
    brute = {  # float32 cosines of the stored rows: the int8 products give the same order
        int(cid): float((rows[m.ids[0]][s:e] @ query).max())
        for m in (a, b)
        for cid, s, e in zip(m.ids, m.starts, [*m.starts[1:], len(m.vectors)], strict=True)
    }
    assert [c for c, _ in ranked] == sorted(brute, key=lambda c: -brute[c])[:3]
    assert [s for _, s in ranked] == pytest.approx([brute[c] for c, _ in ranked], abs=0.02)
    assert dense_top([a, b], np.zeros(8, np.float32), 3) == []


def test_the_cache_loads_a_set_once_and_stays_within_its_bound() -> None:
    rng = np.random.default_rng(4)
    sets = {(i, f"key{i}"): matrix([i * 10], [3], rng) for i in range(5)}
    calls: list[list[int]] = []

    def load(missing: list[tuple[int, str]]) -> dict[tuple[int, str], SetMatrix]:
        calls.append([i for i, _ in missing])
        return {k: sets[k] for k in missing if k in sets and k[0] != 4}  # 4: no vectors

    def get(*ids: int) -> list[int]:
        return [int(m.ids[0]) for m in cache.get([(i, f"key{i}") for i in ids], load)]

    cache = SetVectors(max_bytes=sets[0, "key0"].nbytes * 3)
    assert get(0, 1, 4) == [0, 10]
    assert get(1, 0) == [10, 0]
    assert calls == [[0, 1, 4]]
    get(2, 3)
    assert calls[-1] == [2, 3]
    get(0)  # kept: 1 was the least recently used of four, and went
    assert calls[-1] == [2, 3]
    get(1)
    assert calls[-1] == [1]
    # the same id with another key (a reused id) is another set
    assert cache.get([(0, "other")], load) == [] and calls[-1] == [0]


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    bm25 = [(1, 9.0), (2, 5.0), (3, 1.0)]
    dense = [(3, 0.9), (4, 0.8), (1, 0.1)]
    fused = fuse(bm25, dense)
    assert [c for c, _ in fused] == [1, 3, 2, 4]
    assert fused[0][1] == pytest.approx(1 / 11 + 1 / 13)
    assert fuse([], dense) == [(3, 1 / 11), (4, 1 / 12), (1, 1 / 13)]
    assert fuse(bm25, dense, k=60)[0][1] == pytest.approx(1 / 61 + 1 / 63)


def test_a_flat_bm25_head_weighs_less_than_a_sharp_one() -> None:
    """A paraphrase matches chunks on common words, all scored alike: its bm25 ranking
    weighs half in the fusion, and the dense ranking's first chunk comes first."""
    sharp = [(1, 9.0), (2, 5.0), (3, 1.0)]
    flat = [(1, -3.1), (2, -3.0), (3, -3.0), (4, -2.9)]  # FTS5's bm25 is negative
    assert bm25_head_weight(sharp) == 1.0
    assert bm25_head_weight(flat) == 0.5
    assert bm25_head_weight([(7, 2.0)]) == 1.0  # one chunk holds the words
    assert bm25_head_weight([(1, 10.0), (2, 8.5)]) == pytest.approx(0.75)  # in between
    dense = [(4, 0.6), (9, 0.5), (1, 0.1)]
    assert [c for c, _ in fuse(flat, dense)][:2] == [4, 1]
    assert [c for c, _ in fuse(flat, dense, bm25_weight=1.0)][:2] == [1, 4]


def test_chunk_vectors_are_the_vectors_of_their_passages() -> None:
    @dataclass
    class Chunk:
        text: str
        heading: str | None = None

    chunks = [
        Chunk("Leave accrues monthly. Two days each month.\n| a | b |\n| 1 | 2 |", "Policy"),
        Chunk("## Leave\nLeave accrues monthly for all staff members.", "Leave"),
        Chunk(""),
    ]
    got = embedding.chunk_vectors(chunks)
    texts = ["Policy\n" + chunks[0].text, chunks[1].text, ""]
    for vectors, text in zip(got, texts, strict=True):
        expected = embedding.embed_texts(embedding.passages(text))
        assert vectors.shape == expected.shape
        assert np.allclose(vectors, expected, atol=1e-5)


def test_a_line_wrapped_inside_a_sentence_does_not_end_a_passage() -> None:
    """A PDF's text layer breaks lines mid-sentence; table rows and list items stand alone."""
    text = (
        "Equipment damage is covered by the\nemployer when it happens during duties.\n"
        "| item | owner | cost |\n| laptop | employer | full |\n- one list item stands alone\n"
        "- and so does the next one"
    )
    assert embedding.passages(text) == [
        "Equipment damage is covered by the employer when it happens during duties.",
        "| item | owner | cost |",
        "| laptop | employer | full |",
        "- one list item stands alone",
        "- and so does the next one",
    ]
