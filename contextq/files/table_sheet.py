"""A sheet as the table processors sample it: header, head rows, tail rows, totals.

Rows: in workbooks, a row with no value is not a row. In CSV, a row is a record as
csv.reader yields it (a quoted field may span lines); a blank line between rows is an
empty row, blank lines before the header and at the end of the file are not rows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextq.settings import Settings


@dataclass
class Sheet:
    name: str | None
    header: list[str] = field(default_factory=list)
    head: list[list[str]] = field(default_factory=list)
    tail: list[list[str]] = field(default_factory=list)
    total_rows: int = 0  # data rows, header not counted
    total_columns: int = 0


class RowSampler:
    """First non-empty row as header, then head rows, the last rows in a deque, and counts.

    Workbooks: rows with no value are not rows. CSV (`csv_blank_rows`): a record
    csv.reader yields is a row, a blank line included (an empty row), except blank
    lines before the header and at the end of the file.
    """

    def __init__(
        self, settings: Settings, name: str | None = None, *, csv_blank_rows: bool = False
    ) -> None:
        self.settings = settings
        self.csv_blank_rows = csv_blank_rows
        self.sheet = Sheet(name)
        self._tail: deque[list[str]] = deque(maxlen=settings.DEFAULT_ROWS_TAIL or 1)
        self._has_header = False
        self._pending_blank = 0  # blank rows not yet followed by a non-blank one
        self.leading_blank = 0  # blank records before the header

    def add(self, row: Sequence[Any]) -> None:
        width = row_width(row)
        if width == 0 and not self.csv_blank_rows:
            return
        if width == 0 and not self._has_header:
            self.leading_blank += 1
            return
        if not row:  # a blank line: a row only if a non-blank one follows
            self._pending_blank += 1
            return
        if self._pending_blank:
            pending, self._pending_blank = self._pending_blank, 0
            for _ in range(pending):
                self._data_row([], 0)
        sheet = self.sheet
        sheet.total_columns = max(sheet.total_columns, width)
        if not self._has_header:
            sheet.header = self.cells(row, width)
            self._has_header = True
            return
        self._data_row(row, width)

    def _data_row(self, row: Sequence[Any], width: int) -> None:
        sheet = self.sheet
        sheet.total_rows += 1
        if len(sheet.head) < self.settings.DEFAULT_ROWS_HEAD:
            sheet.head.append(self.cells(row, width))
        elif self.settings.DEFAULT_ROWS_TAIL:
            self._tail.append(self.cells(row, width))

    def cells(self, row: Sequence[Any], width: int) -> list[str]:
        keep = min(width, self.settings.MAX_COLUMNS)
        # cells are stored capped at one char past the limit; rendering counts the cut
        limit = self.settings.MAX_CELL_LENGTH + 1
        return [cell_text(row[i])[:limit] if i < len(row) else "" for i in range(keep)]

    def finish(self) -> Sheet:
        self.sheet.tail = list(self._tail) if self.settings.DEFAULT_ROWS_TAIL else []
        return self.sheet


def row_width(row: Sequence[Any]) -> int:
    n = len(row)
    while n and (row[n - 1] is None or row[n - 1] == ""):
        n -= 1
    return n


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
