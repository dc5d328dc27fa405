"""Tables: rows grouped into chunks that each repeat the header row.

A table reaches the chunker as a section whose `line_start` is 0 (the header row; its
`line_end` says how many data rows follow in the same section), then sections of data
rows (`line_start`..`line_end`) of the same sheet and page. A section with one line per
row is cut between rows; one whose lines do not match its row range (a cell with a line
break) is kept as one block. Rows are whole records, so table chunks do not overlap; a
row larger than a chunk is split like prose, each piece under the header.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from contextq import tokens
from contextq.files.sections import Section
from contextq.retrieval.prose import split_text
from contextq.retrieval.types import Piece


@dataclass(frozen=True, slots=True)
class Rows:
    """Data rows `first`..`last` (1-based, inclusive) and their text, one line per row."""

    first: int
    last: int
    text: str


def rows_of(section: Section) -> list[Rows]:
    """The data rows of a (non-header) table section."""
    assert section.line_start is not None
    last = section.line_end if section.line_end is not None else section.line_start
    lines = section.text.split("\n")
    if len(lines) == last - section.line_start + 1:
        return [
            Rows(section.line_start + i, section.line_start + i, line)
            for i, line in enumerate(lines)
        ]
    return [Rows(section.line_start, last, section.text)]


def split_header(section: Section) -> tuple[str, list[Rows]]:
    """(header text, data rows) of the section that opens a table (`line_start == 0`)."""
    n_rows = section.line_end or 0
    lines = section.text.split("\n")
    if n_rows == 0:
        return section.text, []
    if len(lines) > n_rows:
        header = "\n".join(lines[:-n_rows])
        return header, [Rows(i + 1, i + 1, line) for i, line in enumerate(lines[-n_rows:])]
    return lines[0], [Rows(1, n_rows, "\n".join(lines[1:]))]


@dataclass
class TableChunker:
    """Accumulates rows of one table and emits pieces of about `capacity` tokens."""

    header: str
    sheet: str | None
    page: int | None
    heading: str | None
    capacity: int
    encoding: str
    _pending: list[Rows] = field(default_factory=list, init=False)
    _pending_tokens: int = field(default=0, init=False)
    _header_tokens: int = field(default=0, init=False)
    last_row: int = field(default=0, init=False)  # the last data row seen

    def __post_init__(self) -> None:
        limit = max(1, self.capacity // 2)  # the header never takes more than half a chunk
        self.header, _, kept = tokens.truncate_to_tokens(self.header, limit, self.encoding)
        self._header_tokens = kept + 1  # + the newline after it

    @property
    def room(self) -> int:
        return max(1, self.capacity - self._header_tokens)

    def add(self, rows: Iterable[Rows]) -> Iterator[Piece]:
        for row in rows:
            self.last_row = max(self.last_row, row.last)
            n = tokens.count_tokens_fast(row.text, self.encoding) + 1
            if n > self.room:
                yield from self.finish()
                yield from self._split_row(row)
                continue
            if self._pending_tokens + n > self.room:
                yield from self.finish()
            self._pending.append(row)
            self._pending_tokens += n

    def finish(self) -> Iterator[Piece]:
        """Emit what is pending (at the end of the table, or before an oversized row)."""
        if not self._pending:
            return
        body = "\n".join(r.text for r in self._pending)
        yield self._piece(body, self._pending[0].first, self._pending[-1].last)
        self._pending, self._pending_tokens = [], 0

    def _split_row(self, row: Rows) -> Iterator[Piece]:
        for _, text, _ in split_text(
            row.text, capacity=self.room, overlap=0, encoding=self.encoding
        ):
            yield self._piece(text, row.first, row.last)

    def _piece(self, body: str, first: int, last: int) -> Piece:
        text = f"{self.header}\n{body}"
        return Piece(
            text=text,
            token_count=tokens.count_tokens_fast(text, self.encoding),
            page=self.page,
            sheet=self.sheet,
            line_start=first,
            line_end=last,
            heading=self.heading,
        )
