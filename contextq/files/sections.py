"""The whole extracted text of a file, as located sections (for project indexing,
docs/retrieval.md).

The processors' artefact is cut to MAX_TOKENS_PER_FILE for the context; retrieval needs the
whole text. A `Section` is one stretch of it with where it came from, so a chunk made from
it can name its page, sheet or line range. Producers (the file engine) yield sections in
file order; consumers (the chunker and the index) never see the file itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Section:
    """One stretch of a file's extracted text, in file order.

    - `page`: 1-based page of a document (PDF, PPTX slide), else None;
    - `sheet`: the sheet of a workbook, else None;
    - `line_start` / `line_end`: 1-based first and last line of a text/code file, or data
      row of a table (the header row is row 0), inclusive, else None;
    - `heading`: the nearest heading above the text (markdown), if any.
    """

    text: str
    page: int | None = None
    sheet: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    heading: str | None = None
