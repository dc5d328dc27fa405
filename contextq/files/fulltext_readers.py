"""The readers behind `fulltext.iter_sections`: documents, text, CSV and workbooks.

Each yields `Section`s in file order, in bounded memory, and `Stopped` where it
stopped before the end for a reason of its own (a workbook sheet over
WORKBOOK_MAX_ROWS rows).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xlrd

from contextq.files import xlsx_stream
from contextq.files.csv_read import bounded_lines, sniff_dialect
from contextq.files.documents import cached_conversion
from contextq.files.markdown import markdown_table
from contextq.files.registry import ConversionCache, StreamInfo
from contextq.files.safety import check_archive
from contextq.files.sections import Section
from contextq.files.text import iter_decoded, read_sample, sniff_encoding
from contextq.settings import Settings

SECTION_MAX_CHARS = 4000
SECTION_MAX_LINES = 80
SECTION_ROWS = 25
CELL_MAX_CHARS = 2000
WORKBOOK_MAX_ROWS = 100_000
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_PAGE_HEADING = re.compile(r"\A\s*(?:## Page \d+|<!-- Slide number: *\d+ *-->)[ \t]*\n?")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Stopped:
    """A reader stopped before the end of the file; `at` locates the first text left out."""

    at: Section


# --- documents ------------------------------------------------------------------------------


def document_sections(
    path: Path, info: StreamInfo, settings: Settings, cache: ConversionCache | None
) -> tuple[Any, Iterator[Section]]:
    """(the cached conversion, its sections): converted only if the cache lacks it."""
    converted, _hit = cached_conversion(path, info, settings, cache)
    return converted, markdown_pages(converted.markdown, converted.page_offsets)


def markdown_pages(markdown: str, offsets: list[int] | None) -> Iterator[Section]:
    if not offsets:
        yield from _MarkdownSplitter(None).sections(markdown.split("\n"), first_line=None)
        return
    heading: str | None = None
    ends = [*offsets[1:], len(markdown)]
    for number, (start, end) in enumerate(zip(offsets, ends, strict=True), 1):
        page = _PAGE_HEADING.sub("", markdown[start:end], count=1)
        splitter = _MarkdownSplitter(number, heading)
        yield from splitter.sections(page.split("\n"), first_line=None)
        heading = splitter.heading


class _MarkdownSplitter:
    """Lines → sections: a heading starts one; SECTION_MAX_CHARS/LINES end one."""

    def __init__(self, page: int | None, heading: str | None = None, *, markdown: bool = True):
        self.page = page
        self.heading = heading
        self.markdown = markdown
        self._lines: list[str] = []
        self._chars = 0
        self._first: int | None = None
        self._in_fence = False

    def sections(self, lines: list[str], first_line: int | None) -> Iterator[Section]:
        number = first_line
        for line in lines:
            yield from self.add(line, number)
            number = number + 1 if number is not None else None
        yield from self.flush(number - 1 if number is not None else None)

    def add(self, line: str, number: int | None) -> Iterator[Section]:
        if self.markdown and _FENCE.match(line):
            self._in_fence = not self._in_fence
        heading = _HEADING.match(line) if self.markdown and not self._in_fence else None
        if heading:
            yield from self.flush(number - 1 if number is not None else None)
            self.heading = heading.group(2)
        while len(line) > SECTION_MAX_CHARS:  # one huge line: pieces with the same number
            yield from self.flush(number - 1 if number is not None else None)
            self._start(number)
            yield self._section(line[:SECTION_MAX_CHARS], number, number)
            line = line[SECTION_MAX_CHARS:]
        if self._chars + len(line) > SECTION_MAX_CHARS or len(self._lines) >= SECTION_MAX_LINES:
            yield from self.flush(number - 1 if number is not None else None)
        self._start(number)
        self._lines.append(line)
        self._chars += len(line) + 1

    def _start(self, number: int | None) -> None:
        if not self._lines and self._first is None:
            self._first = number

    def flush(self, last: int | None) -> Iterator[Section]:
        if self._lines:
            text = "\n".join(self._lines).strip("\n")
            if text.strip():
                yield self._section(text, self._first, last)
        self._lines, self._chars, self._first = [], 0, None

    def _section(self, text: str, first: int | None, last: int | None) -> Section:
        self._first = None
        return Section(text, page=self.page, line_start=first, line_end=last, heading=self.heading)


# --- text, code, structured -----------------------------------------------------------------


def text_sections(path: Path, *, markdown: bool) -> Iterator[Section]:
    """Streamed lines (1-based numbers), never the whole file in memory."""
    splitter = _MarkdownSplitter(None, markdown=markdown)
    number = 0
    pending = ""
    for piece in iter_decoded(path, sniff_encoding(read_sample(path))):
        lines = (pending + (piece.lstrip("\ufeff") if number == 0 else piece)).split("\n")
        pending = lines.pop()
        if len(pending) > SECTION_MAX_CHARS * 4:  # a line with no end in sight: give a piece
            lines.append(pending)
            pending = ""
        for line in lines:
            number += 1
            yield from splitter.add(line.removesuffix("\r"), number)
    if pending:
        number += 1
        yield from splitter.add(pending.removesuffix("\r"), number)
    yield from splitter.flush(number)


# --- tables ---------------------------------------------------------------------------------


def csv_sections(path: Path, kind: str) -> Iterator[Section]:
    """SECTION_ROWS data rows per section, under the header; rows numbered from 1."""
    sample = read_sample(path)
    encoding = sniff_encoding(sample)
    dialect = sniff_dialect(sample.decode(encoding, "replace").lstrip("\ufeff"), kind)
    with io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="") as fh:
        rows = csv.reader(bounded_lines(fh), dialect)
        header: list[str] | None = None
        for row in rows:
            if any(cell.strip() for cell in row):
                header = [c.lstrip("\ufeff") for c in row]
                break
        if header is None:
            return
        yield from _table_sections(header, rows, sheet=None)


def _table_sections(
    header: list[str], rows: Iterator[list[str]], *, sheet: str | None
) -> Iterator[Section]:
    block: list[list[str]] = []
    first = number = 0
    for row in rows:
        number += 1
        if not any(str(c).strip() for c in row):
            continue
        if not block:
            first = number
        block.append([str(c)[:CELL_MAX_CHARS] for c in row])
        if len(block) >= SECTION_ROWS:
            yield Section(
                markdown_table([header, *block]), sheet=sheet, line_start=first, line_end=number
            )
            block = []
    if block:
        yield Section(
            markdown_table([header, *block]), sheet=sheet, line_start=first, line_end=number
        )


def workbook_sections(path: Path, kind: str, settings: Settings) -> Iterator[Section | Stopped]:
    """Each sheet's rows under its header (XLSX streamed; XLS one sheet at a time)."""
    if kind == "xls":
        yield from _xls_sections(path)
        return

    check_archive(path, settings, what="workbook")
    sheets, convert = xlsx_stream.read_workbook(
        path,
        head=WORKBOOK_MAX_ROWS,
        tail=0,
        max_columns=max(settings.MAX_COLUMNS, 200),
        max_cell=CELL_MAX_CHARS,
        part_limit=settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES,
    )
    for sheet in sheets:
        header = convert(sheet.header or [])
        yield from _table_sections(header, (convert(r) for r in sheet.head), sheet=sheet.name)
        if sheet.total_rows > len(sheet.head):
            yield Stopped(Section("", sheet=sheet.name, line_start=len(sheet.head) + 1))
            return


def _xls_sections(path: Path) -> Iterator[Section]:
    book = xlrd.open_workbook(str(path), on_demand=True)
    try:
        for index in range(book.nsheets):
            ws = book.sheet_by_index(index)
            rows = (ws.row_values(r) for r in range(ws.nrows))
            header = next(rows, None)
            if header is not None:
                yield from _table_sections([str(c) for c in header], rows, sheet=ws.name)
            book.unload_sheet(index)
    finally:
        book.release_resources()
