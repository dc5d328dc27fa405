"""Token counting: the fast counter and chunked streaming count exactly what tiktoken counts."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq import tokens

# pieces chosen to hit the pre-tokenizer's edges: whitespace runs, CR/LF, contractions,
# digits, combining marks, emoji, non-breaking and ideographic spaces, letters of all cases
PIECES = [
    " ",
    "  ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\n\n",
    " \n",
    "a",
    "Hello",
    "world",
    "'s",
    "'LL",
    "12",
    "12345",
    "é",
    "e\u0301",
    "ß",
    "ǅ",
    "Ωμέγα",
    "日本語",
    "🎉",
    "👩‍👩‍👧",
    "\u00a0",
    "\u3000",
    "\u2028",
    "!",
    "...",
    "->",
    "{",
    "}",
    '"',
    "'",
    "/",
    "//",
    "!\n/",
    "<|endoftext|>",
    "_x",
]
texts = st.lists(st.sampled_from(PIECES), max_size=80).map("".join) | st.text(max_size=200)
ENCODINGS = ["cl100k_base", "o200k_base"]


def tiktoken_count(text: str, encoding: str) -> int:
    return len(tokens.get_encoding(encoding).encode_ordinary(text))


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_fast_count_equals_tiktoken(encoding: str, text: str) -> None:
    assert tokens.count_tokens_fast(text, encoding) == tiktoken_count(text, encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=1000, deadline=None)
@given(text=texts)
def test_counts_add_up_across_every_safe_cut(encoding: str, text: str) -> None:
    """Cut the text at *every* safe point: the pieces' counts sum to the whole's."""
    cuts = sorted({m.start() for m in tokens._SAFE_CUT.finditer(text)} - {0, len(text)})
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert sum(tiktoken_count(p, encoding) for p in pieces) == tiktoken_count(text, encoding)


@settings(max_examples=200, deadline=None)
@given(text=texts, size=st.integers(min_value=1, max_value=40))
def test_streaming_counter_is_exact_for_any_feeding(text: str, size: int) -> None:
    counter = tokens.StreamingTokenCounter(chunk_chars=8)
    for i in range(0, len(text), size):
        counter.feed(text[i : i + size])
    assert counter.finish() == tiktoken_count(text, "cl100k_base")
    assert counter.exact


def test_streaming_counter_flags_text_without_cut_points() -> None:
    counter = tokens.StreamingTokenCounter(chunk_chars=10, max_pending_chars=50)
    counter.feed("x" * 200)
    counter.finish()
    assert not counter.exact


def test_last_safe_cut_finds_the_last_boundary() -> None:
    text = "alpha beta\ngamma" + "z" * 10_000
    assert tokens.last_safe_cut(text) == text.index("\ngamma") + 1
    assert tokens.last_safe_cut("nocuthere") == -1


def test_count_tokens_uses_fast_path_for_long_text_and_stays_exact() -> None:
    text = "The quick brown fox's 12345 jumps\r\n\t over  é\u0301 🎉 " * 2000
    assert len(text) >= tokens.FAST_COUNT_MIN_CHARS
    assert tokens.count_tokens(text) == tiktoken_count(text, "cl100k_base")
    assert tokens.count_tokens(text, "o200k_base") == tiktoken_count(text, "o200k_base")


def test_existing_signatures_still_work() -> None:
    kept, total, kept_n = tokens.truncate_to_tokens("hello world " * 100, 10)
    assert kept_n <= 10 < total
    assert tokens.count_tokens(kept) == kept_n
    assert tokens.encoding_name_for_model("gpt-4o") == "o200k_base"
    assert tokens.count_tokens("") == 0
