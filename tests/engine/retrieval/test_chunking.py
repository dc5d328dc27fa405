"""The chunker: structure, page/row/line ranges, overlap, the cap, determinism
(docs/retrieval.md)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq import tokens
from contextq.files.sections import Section
from contextq.retrieval.chunking import (
    RUN_MAX_CHARS,
    ChunkedText,
    ChunkerOptions,
    chunk_sections,
    chunk_set_key,
)
from contextq.retrieval.prose import OVERSIZE_FACTOR
from contextq.settings import Settings

OPTIONS = ChunkerOptions(chunk_tokens=200, overlap_tokens=20)
LIMIT = int(OPTIONS.chunk_tokens * OVERSIZE_FACTOR)

WORDS_TEXT = (
    "invoice shipment warehouse customer refund battery charger firmware update latency "
    "contract clause liability renewal termination notice payment schedule audit report "
    "incident outage database replica failover certificate rotation deployment pipeline the a "
    "of and to in for with on by from that this is was are be as at"
)
WORDS = WORDS_TEXT.split()


def sentence(rng: random.Random, n: int = 14) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, sentences: int = 5) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def pdf_pages(n: int, *, seed: int = 1, marker_page: int | None = None) -> list[Section]:
    rng = random.Random(seed)
    pages = []
    for page in range(1, n + 1):
        body = "\n\n".join(paragraph(rng) for _ in range(6))
        if page == marker_page:
            body += "\n\nThe flux capacitor serial is QX-88121 on this page only."
        pages.append(Section(text=body, page=page))
    return pages


def chunk(sections: list[Section], options: ChunkerOptions = OPTIONS) -> ChunkedText:
    return chunk_sections(sections, options=options)


def assert_sane(result: ChunkedText, options: ChunkerOptions = OPTIONS) -> None:
    """Invariants of every result: numbered in order, exact token counts, sizes, the cap."""
    assert [c.index for c in result.chunks] == list(range(len(result.chunks)))
    for c in result.chunks:
        assert c.text.strip()
        assert c.token_count == tokens.count_tokens(c.text)
        assert c.token_count <= int(options.chunk_tokens * OVERSIZE_FACTOR)
    assert result.token_count == sum(c.token_count for c in result.chunks)
    assert result.token_count <= options.max_tokens


# --- pages ----------------------------------------------------------------------
def test_pages_are_never_merged_and_every_chunk_names_its_page() -> None:
    pages = pdf_pages(12, marker_page=7)
    result = chunk(pages)
    assert_sane(result)
    assert result.complete and result.stopped_at is None
    assert {c.page for c in result.chunks} == set(range(1, 13))
    pages_text = {s.page: s.text for s in pages}
    for c in result.chunks:
        assert c.text in pages_text[c.page]  # a chunk lies within one page
    marker = [c for c in result.chunks if "QX-88121" in c.text]
    assert marker and all(c.page == 7 for c in marker)
    assert [c.page for c in result.chunks] == sorted(c.page for c in result.chunks)  # file order


def test_chunks_are_about_the_target_size() -> None:
    result = chunk(pdf_pages(20))
    sizes = sorted(c.token_count for c in result.chunks)
    median = sizes[len(sizes) // 2]
    assert 0.6 * OPTIONS.chunk_tokens <= median <= LIMIT, sizes


def test_consecutive_prose_chunks_overlap_by_a_little() -> None:
    text = "\n".join(sentence(random.Random(i), 20) for i in range(200))
    result = chunk([Section(text=text, line_start=1, line_end=200)])
    assert len(result.chunks) >= 5
    overlaps = []
    for a, b in zip(result.chunks, result.chunks[1:], strict=False):
        start_b = text.index(b.text)
        end_a = text.index(a.text) + len(a.text)
        assert start_b < end_a, "no overlap between consecutive chunks"
        overlaps.append(tokens.count_tokens(text[start_b:end_a]))
    # about CHUNK_OVERLAP_TOKENS, never more than a chunk's worth
    assert max(overlaps) <= OPTIONS.overlap_tokens * 2
    assert sum(overlaps) / len(overlaps) >= OPTIONS.overlap_tokens / 4


def test_no_overlap_when_set_to_zero() -> None:
    text = "\n".join(sentence(random.Random(i), 20) for i in range(100))
    result = chunk([Section(text=text)], ChunkerOptions(chunk_tokens=200, overlap_tokens=0))
    joined_len = sum(len(c.text) for c in result.chunks)
    assert joined_len <= len(text)


# --- structure ------------------------------------------------------------------
def test_markdown_headings_start_chunks_and_are_carried() -> None:
    rng = random.Random(3)
    sections = []
    line = 1
    for n, title in enumerate(["Installation", "Configuration", "Troubleshooting"]):
        body = f"## {title}\n\n" + "\n\n".join(paragraph(rng, 4) for _ in range(3 + n))
        sections.append(
            Section(text=body, heading=title, line_start=line, line_end=line + body.count("\n"))
        )
        line += body.count("\n") + 2
    result = chunk(sections)
    assert_sane(result)
    for title in ("Installation", "Configuration", "Troubleshooting"):
        first = next(c for c in result.chunks if c.heading == title)
        assert first.text.startswith(f"## {title}")  # a heading opens a chunk, not ends one
    assert not any(c.text.strip().startswith("##") and c.token_count < 10 for c in result.chunks)


def test_line_ranges_point_at_the_chunk_text() -> None:
    rng = random.Random(5)
    lines = [sentence(rng, rng.randint(3, 25)) for _ in range(400)]
    text = "\n".join(lines)
    result = chunk([Section(text=text, line_start=1, line_end=len(lines))])
    assert_sane(result)
    for c in result.chunks:
        assert c.line_start is not None and c.line_end is not None
        span = "\n".join(lines[c.line_start - 1 : c.line_end])
        assert c.text in span
        assert lines[c.line_start - 1].endswith(c.text.split("\n")[0])
        assert lines[c.line_end - 1].startswith(c.text.split("\n")[-1])
    assert result.chunks[0].line_start == 1 and result.chunks[-1].line_end == len(lines)


def test_line_ranges_survive_a_section_larger_than_a_run() -> None:
    lines = [f"line {i} " + "word " * 30 for i in range(1, 2 * RUN_MAX_CHARS // 150 + 50)]
    text = "\n".join(lines)
    assert len(text) > RUN_MAX_CHARS
    result = chunk([Section(text=text, line_start=1, line_end=len(lines))])
    assert_sane(result)
    for c in result.chunks:
        assert c.line_start is not None and c.line_end is not None
        assert c.text.startswith(f"line {c.line_start} ") or c.text.startswith("word")
        assert f"line {c.line_end} " in c.text or lines[c.line_end - 1].endswith(c.text[-20:])
    assert result.chunks[-1].line_end == len(lines)


# --- tables ---------------------------------------------------------------------
def table_sections(rows: int, *, sheet: str | None = None, per_section: int = 50) -> list[Section]:
    header = "| order | customer | amount | status |\n|---|---|---|---|"
    out = [Section(text=header, line_start=0, line_end=0, sheet=sheet)]
    for start in range(1, rows + 1, per_section):
        end = min(rows, start + per_section - 1)
        body = "\n".join(
            f"| ORD-{r:05d} | customer {r % 37} | {r * 7.5:.2f} | shipped |"
            for r in range(start, end + 1)
        )
        out.append(Section(text=body, line_start=start, line_end=end, sheet=sheet))
    return out


def test_table_chunks_repeat_the_header_and_cover_every_row_once() -> None:
    result = chunk(table_sections(500, sheet="Orders"))
    assert_sane(result)
    assert len(result.chunks) > 5
    covered: list[int] = []
    for c in result.chunks:
        assert c.sheet == "Orders"
        assert c.text.startswith("| order | customer | amount | status |\n|---|---|---|---|\n")
        assert c.line_start is not None and c.line_end is not None
        body_rows = c.text.split("\n")[2:]
        assert body_rows[0].startswith(f"| ORD-{c.line_start:05d} ")
        assert body_rows[-1].startswith(f"| ORD-{c.line_end:05d} ")
        covered.extend(range(c.line_start, c.line_end + 1))
    assert covered == list(range(1, 501))  # no row twice (no overlap), none missing


def test_header_section_with_rows_in_it() -> None:
    text = "id,name\n" + "\n".join(f"{i},name-{i}" for i in range(1, 31))
    result = chunk([Section(text=text, line_start=0, line_end=30)])
    assert all(c.text.startswith("id,name\n") for c in result.chunks)
    assert result.chunks[0].line_start == 1 and result.chunks[-1].line_end == 30


def test_a_row_larger_than_a_chunk_is_split_under_its_header() -> None:
    big = "| 1 | " + " ".join(sentence(random.Random(9)) for _ in range(60)) + " |"
    result = chunk([Section(text="| id | notes |", line_start=0, line_end=0),
                    Section(text=big, line_start=1, line_end=1),
                    Section(text="| 2 | short |", line_start=2, line_end=2)])  # fmt: skip
    assert_sane(result)
    assert len(result.chunks) >= 3
    assert all(c.text.startswith("| id | notes |\n") for c in result.chunks)
    assert [c.line_start for c in result.chunks[:-1]] == [1] * (len(result.chunks) - 1)
    assert result.chunks[-1].line_start == 2


def test_a_new_sheet_starts_a_new_table() -> None:
    result = chunk(table_sections(5, sheet="A") + table_sections(5, sheet="B"))
    assert [c.sheet for c in result.chunks] == ["A", "B"]


def test_text_after_a_table_is_prose_again() -> None:
    prose = Section(text="## Notes\n\n" + paragraph(random.Random(2)), heading="Notes")
    result = chunk([*table_sections(10), prose])
    assert result.chunks[-1].text.startswith("## Notes")
    assert result.chunks[-1].heading == "Notes"


# --- the cap --------------------------------------------------------------------
def test_the_cap_stops_at_a_page_and_reads_no_further() -> None:
    consumed: list[int] = []

    def producer() -> Iterator[Section]:
        for s in pdf_pages(300):
            consumed.append(s.page or 0)
            yield s

    options = ChunkerOptions(chunk_tokens=200, overlap_tokens=20, max_tokens=5_000)
    result = chunk_sections(producer(), options=options)
    assert_sane(result, options)
    assert not result.complete
    assert result.token_count > options.max_tokens - LIMIT
    last_page = result.chunks[-1].page
    assert result.stopped_at is not None and result.stopped_at["page"] in {last_page, last_page + 1}
    assert max(consumed) <= last_page + 2  # the producer was not read to the end


def test_stopped_at_names_a_row_for_tables() -> None:
    options = ChunkerOptions(chunk_tokens=200, overlap_tokens=0, max_tokens=1_000)
    result = chunk_sections(table_sections(1000, sheet="Big"), options=options)
    assert not result.complete
    assert result.stopped_at == {"sheet": "Big", "line": result.chunks[-1].line_end + 1}


# --- determinism and keys -------------------------------------------------------
def test_same_sections_same_chunks() -> None:
    sections = pdf_pages(10) + table_sections(120, sheet="S")
    assert chunk(sections) == chunk(list(sections))


def test_the_key_changes_with_the_bytes_and_with_every_option() -> None:
    base = ChunkerOptions()
    keys = {
        chunk_set_key("a" * 64, base),
        chunk_set_key("b" * 64, base),
        chunk_set_key("a" * 64, ChunkerOptions(chunk_tokens=300)),
        chunk_set_key("a" * 64, ChunkerOptions(overlap_tokens=10)),
        chunk_set_key("a" * 64, ChunkerOptions(max_tokens=1000)),
        chunk_set_key("a" * 64, ChunkerOptions(encoding="o200k_base")),
    }
    assert len(keys) == 6
    assert all(len(k) <= 160 for k in keys)


def test_options_come_from_settings_and_bad_overlap_is_refused() -> None:
    options = ChunkerOptions.from_settings(
        Settings(CHUNK_TOKENS=300, CHUNK_OVERLAP_TOKENS=30, MAX_INDEX_TOKENS_PER_FILE=9000)
    )
    assert (options.chunk_tokens, options.overlap_tokens, options.max_tokens) == (300, 30, 9000)
    with pytest.raises(ValueError, match="CHUNK_OVERLAP_TOKENS"):
        Settings(CHUNK_TOKENS=100, CHUNK_OVERLAP_TOKENS=60)
    with pytest.raises(ValueError, match="overlap_tokens"):
        ChunkerOptions(chunk_tokens=100, overlap_tokens=60)


# --- odd input ------------------------------------------------------------------
def test_empty_and_blank_sections_give_no_chunks() -> None:
    result = chunk([Section(text=""), Section(text="  \n\n "), Section(text="\n", page=3)])
    assert result.chunks == () and result.complete and result.token_count == 0


def test_dense_scripts_stay_within_the_size() -> None:
    cjk = "。".join("日本語のテキストを検索するための文章です" * 3 for _ in range(200))
    mixed = [Section(text="Short intro in English.\n\n" + cjk, page=1)]
    result = chunk(mixed)
    assert_sane(result)
    assert len(result.chunks) > 5


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(min_size=0, max_size=3000),
            st.one_of(st.none(), st.integers(1, 5)),
        ),
        max_size=8,
    )
)
def test_any_text_gives_sane_chunks(parts: list[tuple[str, int | None]]) -> None:
    sections = [Section(text=text, page=page) for text, page in parts]
    result = chunk(sections)
    assert_sane(result)
    for c in result.chunks:  # within the text of its page (its sections joined as a run)
        page_text = "\n\n".join(s.text for s in sections if s.page == c.page and s.text.strip())
        assert c.text in page_text
