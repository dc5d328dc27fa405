"""The whole extracted text of a file, as located sections, for indexing (docs/retrieval.md).

`iter_sections(path, filename, settings=..., cache=..., max_tokens=...)` gives a
`FullText`: iterate it once for `Section`s in file order; afterwards it says how many
tokens were indexed and where it stopped. It covers the WHOLE text, not the artefact
cut to MAX_TOKENS_PER_FILE, and redoes no expensive work:

- documents come from the conversion processing just made (`converted`, handed on by the
  worker in the same process: the file is not read again), else from the conversion
  cache (the markdown `process_file` stored, with its page and slide boundaries), so a
  PDF is not converted again: one section per heading block of each page, `page` set;
- text, code and structured files are streamed in bounded memory: sections of up to
  SECTION_MAX_LINES lines (`line_start`/`line_end`), a markdown heading starting a new
  one (`heading`);
- CSV/TSV are streamed through csv.reader: SECTION_ROWS rows per section as a markdown
  table under the header row, `line_start`/`line_end` the data rows (header = row 0);
  XLSX/XLSM/XLS by sheet (`sheet`) the same way, up to WORKBOOK_MAX_ROWS rows per sheet;
- images, audio, archives and ODS have no text indexed here (`FullText.indexable` False).

Every section's text is cleaned like processed text (`clean.clean_text`). Tokens are
counted per section only when the whole text may exceed `max_tokens` (a known total
below it, from the conversion cache or the caller's `known_tokens`, skips counting);
the section that crosses the limit is cut on a token boundary and iteration stops.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contextq import tokens
from contextq.files import fulltext_readers as readers
from contextq.files.clean import clean_text
from contextq.files.detect import detect
from contextq.files.documents import Converted
from contextq.files.registry import ConversionCache
from contextq.files.sections import Section
from contextq.settings import Settings

DEFAULT_MAX_TOKENS = 2_000_000  # docs/retrieval.md MAX_INDEX_TOKENS_PER_FILE


@dataclass(frozen=True)
class StopPoint:
    """Where indexing stopped: the location of the first text not (wholly) indexed."""

    page: int | None = None
    sheet: str | None = None
    line: int | None = None  # line of a text file, or data row of a table

    @classmethod
    def of(cls, section: Section) -> StopPoint:
        return cls(section.page, section.sheet, section.line_start)


class FullText:
    """Sections of one file's whole text; iterate once, then read the counts.

    `total_tokens_indexed`: the tokens of the sections yielded (counted exactly when the
    limit could be reached; else the known total of the whole text, which also counts
    the `## Page N` headings the sections leave out). `stopped_at`: None when the whole
    text was yielded, else where the first text left out lies. `indexable`: False for
    files with no text to index (images, audio, archives, ODS).
    """

    def __init__(
        self,
        sections: Iterator[Section | readers.Stopped],
        *,
        max_tokens: int,
        known_tokens: int | None,
        indexable: bool = True,
    ) -> None:
        self._sections = sections
        self.max_tokens = max_tokens
        self.known_tokens = known_tokens
        self.indexable = indexable
        self.total_tokens_indexed = 0
        self.stopped_at: StopPoint | None = None  # None: the whole text was indexed

    @property
    def complete(self) -> bool:
        return self.stopped_at is None

    def __iter__(self) -> Iterator[Section]:
        counting = self.known_tokens is None or self.known_tokens > self.max_tokens
        for item in self._sections:
            if isinstance(item, readers.Stopped):
                self.stopped_at = StopPoint.of(item.at)
                break
            text = clean_text(item.text)
            if not text.strip():
                continue
            section = _with_text(item, text)
            if counting:
                n = tokens.count_tokens(text)
                left = self.max_tokens - self.total_tokens_indexed
                if n > left:
                    kept, _, kept_n = tokens.truncate_to_tokens(text, max(left, 0))
                    self.stopped_at = StopPoint.of(section)
                    if kept.strip():
                        self.total_tokens_indexed += kept_n
                        yield _with_text(section, kept)
                    return
                self.total_tokens_indexed += n
            yield section
        if not counting and self.stopped_at is None:
            self.total_tokens_indexed = self.known_tokens or 0


def _with_text(section: Section, text: str) -> Section:
    return Section(
        text, section.page, section.sheet, section.line_start, section.line_end, section.heading
    )


def iter_sections(
    path: Path,
    filename: str,
    *,
    settings: Settings,
    cache: ConversionCache | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    known_tokens: int | None = None,
    converted: Converted | None = None,
) -> FullText:
    """The file's whole text as sections (see the module doc). Raises what processing
    raises for a file it cannot read (ContextqError subclasses). `converted`: a
    document's conversion that processing just made or read (`FileExtractionResult.
    full_text`): its sections are cut from it, the file is neither read nor converted."""
    if isinstance(converted, Converted):
        pages = readers.markdown_pages(converted.markdown, converted.page_offsets)
        known = converted.tokens if known_tokens is None else known_tokens
        return FullText(pages, max_tokens=max_tokens, known_tokens=known)

    info = detect(path, filename)
    category, kind = info.category, info.file_type
    if category == "document" and kind != "zip":
        converted, pages = readers.document_sections(path, info, settings, cache)
        known = converted.tokens if known_tokens is None else known_tokens
        return FullText(pages, max_tokens=max_tokens, known_tokens=known)
    sections: Iterator[Section | readers.Stopped]
    if kind in ("csv", "tsv"):
        sections = readers.csv_sections(path, kind)
    elif kind in ("xlsx", "xlsm", "xls"):
        sections = readers.workbook_sections(path, kind, settings)
    elif category in ("text", "code", "structured"):
        sections = readers.text_sections(path, markdown=kind == "markdown")
    else:
        return FullText(iter(()), max_tokens=max_tokens, known_tokens=0, indexable=False)
    return FullText(sections, max_tokens=max_tokens, known_tokens=known_tokens)
