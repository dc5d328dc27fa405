"""The chunker's value types: a `Piece` (a chunk before it is numbered) and a `Chunk`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Piece:
    """A stretch of a file's text sized for retrieval, with where it came from.

    `page`/`sheet` as in `contextq.files.sections.Section`; `line_start`/`line_end` are
    1-based inclusive lines of a text file, or data rows of a table (header = row 0).
    `token_count` is the exact count of `text` in the chunker's encoding.
    """

    text: str
    token_count: int
    page: int | None = None
    sheet: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    heading: str | None = None

    def location(self) -> dict[str, int | str]:
        """Where this piece starts, for people: {"page": 40} or {"sheet": "Q1", "line": 12}."""
        where: dict[str, int | str] = {}
        if self.page is not None:
            where["page"] = self.page
        if self.sheet is not None:
            where["sheet"] = self.sheet
        if self.line_start is not None:
            where["line"] = self.line_start
        return where


@dataclass(frozen=True, slots=True)
class Chunk:
    """A numbered piece of a file: `index` is 0-based, in file order."""

    index: int
    text: str
    token_count: int
    page: int | None = None
    sheet: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    heading: str | None = None

    @classmethod
    def from_piece(cls, piece: Piece, index: int) -> Chunk:
        return cls(
            index=index,
            text=piece.text,
            token_count=piece.token_count,
            page=piece.page,
            sheet=piece.sheet,
            line_start=piece.line_start,
            line_end=piece.line_end,
            heading=piece.heading,
        )
