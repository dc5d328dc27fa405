"""fulltext.iter_sections: the whole text as located sections, for indexing (docs/retrieval.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from contextq.files.fulltext import iter_sections
from contextq.files.pipeline import process_file
from contextq.files.registry import MemoryConversionCache
from contextq.settings import Settings
from tests.engine.files import real_world

Write = Callable[[str, bytes], Path]


class CountingCache(MemoryConversionCache):
    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    def put(self, key: str, markdown: str) -> None:
        self.puts += 1
        super().put(key, markdown)

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        with super().lock(key):
            yield


def test_pdf_sections_come_from_the_cache_with_their_pages(write: Write) -> None:
    settings = Settings()
    path = write("long.pdf", real_world.text_pdf(6, lines_per_page=30))
    cache = CountingCache()
    processed = process_file(path, "long.pdf", settings=settings, cache=cache)
    assert processed.success and cache.puts == 1
    full = iter_sections(path, "long.pdf", settings=settings, cache=cache)
    sections = list(full)
    assert cache.puts == 1  # not converted again
    assert {s.page for s in sections} == {1, 2, 3, 4, 5, 6}
    for section in sections:
        assert section.page is not None
        assert f"Page {section.page} line" in section.text
        assert "## Page" not in section.text  # the page is in `page`, not in the text
    assert "Page 6 line 29" in sections[-1].text
    assert full.complete and full.total_tokens_indexed > 0


def test_pdf_sections_from_the_processors_conversion_read_nothing_again(write: Write) -> None:
    """Processing hands its conversion on (`full_text`): the sections are the same as from
    the cache, and the file is neither read nor converted again (it is gone here)."""
    settings = Settings()
    path = write("handed.pdf", real_world.text_pdf(5, lines_per_page=20))
    cache = CountingCache()
    processed = process_file(path, "handed.pdf", settings=settings, cache=cache)
    assert processed.success and processed.full_text is not None
    from_cache = list(iter_sections(path, "handed.pdf", settings=settings, cache=cache))
    path.unlink()
    handed = iter_sections(
        path, "handed.pdf", settings=settings, cache=None, converted=processed.full_text
    )
    assert list(handed) == from_cache and {s.page for s in from_cache} == set(range(1, 6))
    assert cache.puts == 1 and handed.complete


def test_pdf_sections_beyond_the_artefact_cut(write: Write) -> None:
    """The processed artefact is cut to MAX_TOKENS_PER_FILE; the sections are not."""
    settings = Settings(MAX_TOKENS_PER_FILE=200)
    path = write("long.pdf", real_world.text_pdf(8))
    cache = MemoryConversionCache()
    processed = process_file(path, "long.pdf", settings=settings, cache=cache)
    assert processed.truncation.truncated and "Page 8 line" not in (processed.content or "")
    text = "\n".join(
        s.text for s in iter_sections(path, "long.pdf", settings=settings, cache=cache)
    )
    assert "Page 8 line 39" in text


def test_csv_sections_keep_the_header_and_number_rows(write: Write) -> None:
    rows = "\n".join(f"{i},name {i},{i * 2}" for i in range(1, 61))
    path = write("t.csv", f"id,name,double\n{rows}\n".encode())
    sections = list(iter_sections(path, "t.csv", settings=Settings()))
    assert [(s.line_start, s.line_end) for s in sections] == [(1, 25), (26, 50), (51, 60)]
    for s in sections:
        assert s.text.startswith("| id | name | double |")
        assert f"| {s.line_start} | name {s.line_start} |" in s.text
        assert f"| {s.line_end} | name {s.line_end} |" in s.text


def test_legacy_encoded_csv_is_decoded(write: Write) -> None:
    path = write("sjis.csv", real_world.legacy_csv("cp932"))
    sections = list(iter_sections(path, "sjis.csv", settings=Settings()))
    assert sections[0].text.startswith("| 名前 | 住所 | 電話番号 |")


def test_text_sections_have_line_ranges(write: Write) -> None:
    path = write("log.txt", "".join(f"entry {i}\n" for i in range(1, 201)).encode())
    sections = list(iter_sections(path, "log.txt", settings=Settings()))
    assert [(s.line_start, s.line_end) for s in sections] == [(1, 80), (81, 160), (161, 200)]
    for s in sections:
        lines = s.text.split("\n")
        assert lines[0] == f"entry {s.line_start}" and lines[-1] == f"entry {s.line_end}"


def test_markdown_headings_start_sections(write: Write) -> None:
    text = "# Intro\nhello\n\n## Setup\n```sh\n# not a heading\n```\nstep\n## Use\nrun it\n"
    path = write("guide.md", text.encode())
    sections = list(iter_sections(path, "guide.md", settings=Settings()))
    assert [(s.heading, s.line_start, s.line_end) for s in sections] == [
        ("Intro", 1, 3),
        ("Setup", 4, 8),
        ("Use", 9, 10),
    ]
    assert "# not a heading" in sections[1].text


def test_max_tokens_stops_and_says_where(write: Write) -> None:
    path = write("big.txt", "".join(f"line {i} with some words\n" for i in range(1, 2001)).encode())
    full = iter_sections(path, "big.txt", settings=Settings(), max_tokens=500)
    sections = list(full)
    assert full.total_tokens_indexed <= 500
    assert full.total_tokens_indexed >= 450
    assert not full.complete and full.stopped_at is not None
    assert full.stopped_at.line == sections[-1].line_start
    assert "line 2000" not in "\n".join(s.text for s in sections)


def test_known_total_under_the_limit_skips_counting(write: Write) -> None:
    path = write("small.txt", b"alpha beta\n" * 10)
    full = iter_sections(path, "small.txt", settings=Settings(), known_tokens=21)
    assert len(list(full)) == 1 and full.total_tokens_indexed == 21 and full.complete


def test_huge_single_line_is_cut_into_pieces(write: Write) -> None:
    path = write("one.txt", b"x" * 20_000 + b"\nend\n")
    sections = list(iter_sections(path, "one.txt", settings=Settings()))
    assert all(len(s.text) <= 4000 for s in sections)
    assert sum(len(s.text) for s in sections if s.line_start == 1) == 20_000
    assert sections[-1].text == "end" and sections[-1].line_start == 2


def test_workbook_sections_name_their_sheet(write: Write, samples) -> None:  # type: ignore[no-untyped-def]
    data = samples.xlsx({"Q1": [["a", "b"], [1, 2], [3, 4]], "Q2": [["c"], ["x"]]})
    sections = list(iter_sections(write("b.xlsx", data), "b.xlsx", settings=Settings()))
    assert [(s.sheet, s.line_start, s.line_end) for s in sections] == [("Q1", 1, 2), ("Q2", 1, 1)]
    assert sections[0].text.startswith("| a | b |")


def test_pptx_slides_are_pages(write: Write) -> None:
    from tests.engine.files import media_samples

    path = write("deck.pptx", media_samples.pptx_bytes(3))
    pages = {s.page for s in iter_sections(path, "deck.pptx", settings=Settings())}
    assert pages == {1, 2, 3}


def test_sections_are_clean(write: Write) -> None:
    clean_start = "plain words " * 20 + "\n"
    data = clean_start.encode() + b"a\x00b\x1b[31mred\x1b[0m\xef\xbf\xbe c\r\nnext\x07\n"
    path = write("dirty.txt", data)
    text = "\n".join(s.text for s in iter_sections(path, "dirty.txt", settings=Settings()))
    assert text == clean_start + "abred c\nnext"


def test_images_have_nothing_to_index(write: Write) -> None:
    full = iter_sections(write("p.jpg", real_world.jpeg_with_gps()), "p.jpg", settings=Settings())
    assert list(full) == [] and not full.indexable
