"""Search terms from user queries: words only, never engine syntax."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from contextq.retrieval.terms import MAX_QUERY_TERMS, search_terms


def test_words_are_lower_cased_unique_and_in_order() -> None:
    assert search_terms("Torque wrench TORQUE calibration") == ["torque", "wrench", "calibration"]


def test_syntax_characters_are_not_terms() -> None:
    query = '"torque* NEAR(wrench, 2) -press AND (fluid) col:grade ^x'
    assert search_terms(query) == ["torque", "near", "wrench", "press", "fluid", "col", "grade"]


def test_function_words_and_single_characters_are_dropped_unless_nothing_else_is_left() -> None:
    assert search_terms("what is the interval of the press") == ["interval", "press"]
    assert search_terms("Morrow's contract, part 5") == ["morrow", "contract", "part"]
    assert search_terms("to be or not to be") == ["to", "be", "or", "not"]
    assert search_terms("x y 7") == ["x", "y", "7"]


def test_joined_words_are_also_a_phrase() -> None:
    assert search_terms("raise TIMESHEET_BATCH in us-east-1 on v5.3") == [
        "raise", "timesheet batch", "timesheet", "batch", "us east 1", "us", "east", "v5 3", "v5",
    ]  # fmt: skip


def test_unicode_words_are_kept_and_normalised() -> None:
    expected = ["calibración", "ñandú", "file", "日本語"]
    assert search_terms("Calibración ÑANDÚ ﬁle 日本語") == expected
    assert search_terms("cafe\u0301") == ["café"]  # NFKC composes the accent


def test_a_long_query_keeps_its_longest_words() -> None:
    words = [f"w{i:03d}" for i in range(200)] + ["distinctiveword"]
    terms = search_terms(" ".join(words))
    assert len(terms) == MAX_QUERY_TERMS
    assert "distinctiveword" in terms
    assert search_terms("a " * 10_000) == ["a"]


@given(st.text(max_size=2000))
def test_any_text_gives_only_words_and_phrases_of_words(query: str) -> None:
    terms = search_terms(query)
    assert len(terms) <= MAX_QUERY_TERMS
    assert len(set(terms)) == len(terms)
    assert all(re.fullmatch(r"[^\W_]+( [^\W_]+)*", t) for t in terms)
