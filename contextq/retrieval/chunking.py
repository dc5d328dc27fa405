"""Chunking a file's whole extracted text for retrieval (docs/retrieval.md).

Input: `contextq.files.sections.Section`s in file order (the file engine's whole text, not
the truncated artefact). Output: numbered chunks of about `chunk_tokens` tokens that follow
the structure:

- consecutive sections of the same page and sheet form a run (a new heading starts a new
  run once the run holds half a chunk), split by semantic-text-splitter's Markdown
  splitter (headings, paragraphs, lines, sentences) with an overlap of about
  `overlap_tokens` (`contextq.retrieval.prose`);
- a chunk never spans two pages or two sheets, so each chunk names one page;
- table rows are grouped under a repeated header row, without overlap
  (`contextq.retrieval.tables`);
- every chunk knows its index, page, sheet, line or row range and heading.

The whole file is capped at `max_tokens` (the sum of the chunks' tokens) and
`MAX_CHUNKS_PER_FILE` chunks: the chunk that would pass either is not kept and `stopped_at`
says where it starts; the sections after it are not read. Chunking is deterministic: the
same sections and options give the same chunks, so a chunk set is keyed by the bytes'
sha256 + `ChunkerOptions.fingerprint()` and reused.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass

from contextq import tokens
from contextq.files.sections import Section
from contextq.retrieval.prose import Calibration, split_prose
from contextq.retrieval.tables import TableChunker, rows_of, split_header
from contextq.retrieval.types import Chunk, Piece
from contextq.settings import Settings

# Bump whenever the chunks made from the same sections could change (splitter, rules).
CHUNKER_VERSION = "1"

# At most this many chunks per file (the store numbers a file's chunks in 20 bits).
MAX_CHUNKS_PER_FILE = 1 << 20

# A run of prose longer than this is split on its own (a line break), so memory stays bounded
# and the cap is checked often; only a chunk that would straddle the cut is lost to it.
RUN_MAX_CHARS = 256 * 1024


@dataclass(frozen=True, slots=True)
class ChunkerOptions:
    chunk_tokens: int = 400
    overlap_tokens: int = 40
    max_tokens: int = 2_000_000
    encoding: str = tokens.DEFAULT_ENCODING

    def __post_init__(self) -> None:
        if self.chunk_tokens < 1 or self.max_tokens < 1:
            raise ValueError("chunk_tokens and max_tokens must be positive")
        if not 0 <= self.overlap_tokens * 2 <= self.chunk_tokens:
            raise ValueError("overlap_tokens must be between 0 and half of chunk_tokens")

    @classmethod
    def from_settings(cls, settings: Settings) -> ChunkerOptions:
        return cls(
            chunk_tokens=settings.CHUNK_TOKENS,
            overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
            max_tokens=settings.MAX_INDEX_TOKENS_PER_FILE,
        )

    def fingerprint(self) -> str:
        """Everything that decides the chunks of given sections."""
        return (
            f"v{CHUNKER_VERSION}-{self.encoding}-c{self.chunk_tokens}"
            f"-o{self.overlap_tokens}-m{self.max_tokens}"
        )


def chunk_set_key(content_sha256: str, options: ChunkerOptions) -> str:
    """The key under which the chunks of these bytes are stored and reused (≤ 128 chars)."""
    return f"{content_sha256}:{options.fingerprint()}"


@dataclass(frozen=True, slots=True)
class ChunkedText:
    chunks: tuple[Chunk, ...]
    token_count: int  # sum of the chunks' tokens (what the cap counts)
    complete: bool
    # where indexing stopped when the cap was reached: {"page": 40} / {"sheet", "line"} / {}
    stopped_at: dict[str, int | str] | None


def chunk_sections(sections: Iterable[Section], *, options: ChunkerOptions) -> ChunkedText:
    """Chunk a file's sections (see the module docstring)."""
    chunks: list[Chunk] = []
    total = 0
    stopped_at: dict[str, int | str] | None = None
    with closing(_pieces(sections, options)) as pieces:
        for piece in pieces:
            if total + piece.token_count > options.max_tokens or len(chunks) >= MAX_CHUNKS_PER_FILE:
                stopped_at = piece.location()
                break
            chunks.append(Chunk.from_piece(piece, len(chunks)))
            total += piece.token_count
    return ChunkedText(
        chunks=tuple(chunks), token_count=total, complete=stopped_at is None, stopped_at=stopped_at
    )


def _pieces(sections: Iterable[Section], options: ChunkerOptions) -> Generator[Piece, None, None]:
    grouper = _Grouper(options)
    iterator = iter(sections)
    try:
        for section in iterator:
            yield from grouper.add(section)
        yield from grouper.finish()
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()  # a producer reading a file stops when the cap is reached


class _Grouper:
    """Sorts sections into prose runs (same page and sheet) and tables."""

    def __init__(self, options: ChunkerOptions) -> None:
        self.options = options
        self.run: list[Section] = []
        self.run_chars = 0
        self.table: TableChunker | None = None
        self.calibration = Calibration()

    def add(self, section: Section) -> Iterator[Piece]:
        if not section.text.strip():
            return
        if section.line_start == 0:
            yield from self.finish()
            header, rows = split_header(section)
            self.table = TableChunker(
                header=header,
                sheet=section.sheet,
                page=section.page,
                heading=section.heading,
                capacity=self.options.chunk_tokens,
                encoding=self.options.encoding,
            )
            yield from self.table.add(rows)
        elif self._continues_table(section):
            assert self.table is not None
            yield from self.table.add(rows_of(section))
        else:
            yield from self._finish_table()
            yield from self._add_prose(section)

    def finish(self) -> Iterator[Piece]:
        yield from self._finish_table()
        yield from self._finish_run()

    def _continues_table(self, section: Section) -> bool:
        table = self.table
        return (
            table is not None
            and section.line_start is not None
            and section.line_start > table.last_row
            and (section.sheet, section.page, section.heading)
            == (table.sheet, table.page, table.heading)
        )

    def _add_prose(self, section: Section) -> Iterator[Piece]:
        if self.run and self._starts_run(section):
            yield from self._finish_run()
        for part in _windows(section, RUN_MAX_CHARS):
            self.run.append(part)
            self.run_chars += len(part.text)
            if self.run_chars >= RUN_MAX_CHARS:
                yield from self._finish_run()

    def _starts_run(self, section: Section) -> bool:
        """A new page or sheet always starts a new run; a new heading does once the run
        holds half a chunk (small sections under their own headings are merged)."""
        first, last = self.run[0], self.run[-1]
        if (section.page, section.sheet) != (first.page, first.sheet):
            return True
        half_chunk_chars = self.options.chunk_tokens / 2 * (self.calibration.ratio or 4.0)
        return section.heading != last.heading and self.run_chars >= half_chunk_chars

    def _finish_table(self) -> Iterator[Piece]:
        if self.table is not None:
            yield from self.table.finish()
            self.table = None

    def _finish_run(self) -> Iterator[Piece]:
        if not self.run:
            return
        run, self.run, self.run_chars = self.run, [], 0
        yield from split_prose(
            run,
            capacity=self.options.chunk_tokens,
            overlap=self.options.overlap_tokens,
            encoding=self.options.encoding,
            calibration=self.calibration,
        )


def _windows(section: Section, max_chars: int) -> Iterator[Section]:
    """`section` cut into pieces of at most `max_chars`, at line breaks where there are any,
    each with its own line range."""
    text, line = section.text, section.line_start
    while len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars) + 1 or max_chars
        head, text = text[:cut], text[cut:]
        newlines = head.count("\n")
        last_line = None if line is None else line + newlines - head.endswith("\n")
        yield _with_text(section, head, line, last_line)
        if line is not None:
            line += newlines
    yield _with_text(section, text, line, section.line_end)


def _with_text(
    section: Section, text: str, line_start: int | None, line_end: int | None
) -> Section:
    return Section(
        text=text,
        page=section.page,
        sheet=section.sheet,
        line_start=line_start,
        line_end=line_end,
        heading=section.heading,
    )


__all__ = [
    "CHUNKER_VERSION",
    "Chunk",
    "ChunkedText",
    "ChunkerOptions",
    "chunk_sections",
    "chunk_set_key",
]
