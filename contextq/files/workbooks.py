"""Workbooks → sampled sheets: XLSX/XLSM streamed (`xlsx_stream`), XLS, ODS.

XLSX/XLSM are streamed by `xlsx_stream` (expat, DTDs refused, byte caps); XLS goes
through xlrd (on_demand, one sheet loaded at a time). ODS is read by streaming
`content.xml` through defusedxml's iterparse with a byte cap (not odfpy: it builds the
whole document tree in memory).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import xlrd
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from contextq.errors import HostileInput, InvalidInput
from contextq.files import xlsx_stream
from contextq.files.safety import check_archive
from contextq.files.table_sheet import RowSampler, Sheet, row_width
from contextq.settings import Settings

# ---------------------------------------------------------------- workbooks


def read_xlsx(path: Path, settings: Settings, meta: dict[str, Any]) -> list[Sheet]:
    """Every sheet, streamed (see `xlsx_stream`): exact rows even with no dimension record."""
    check_archive(path, settings, what="workbook")

    try:
        raw, convert = xlsx_stream.read_workbook(
            path,
            head=settings.DEFAULT_ROWS_HEAD,
            tail=settings.DEFAULT_ROWS_TAIL,
            max_columns=settings.MAX_COLUMNS,
            max_cell=settings.MAX_CELL_LENGTH + 1,
            part_limit=settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES,
        )
    except DefusedXmlException as exc:
        raise HostileInput(f"this workbook's XML uses forbidden constructs ({exc})") from exc
    sampler = RowSampler(settings)

    def cells(row: list[Any] | None) -> list[str]:
        values = convert(row or [])
        return sampler.cells(values, row_width(values))

    sheets = [
        Sheet(
            name=r.name,
            header=cells(r.header),
            head=[cells(row) for row in r.head],
            tail=[cells(row) for row in r.tail] if settings.DEFAULT_ROWS_TAIL else [],
            total_rows=r.total_rows,
            total_columns=r.total_columns,
        )
        for r in raw
    ]
    meta["sheet_names"] = [s.name for s in sheets]
    return sheets


def read_xls(path: Path, settings: Settings, meta: dict[str, Any]) -> list[Sheet]:
    try:
        book = xlrd.open_workbook(str(path), on_demand=True)
    except xlrd.XLRDError as exc:
        raise InvalidInput(f"this XLS workbook cannot be read: {exc}") from exc
    sheets: list[Sheet] = []
    try:
        for index in range(book.nsheets):
            ws = book.sheet_by_index(index)
            sampler = RowSampler(settings, ws.name)
            for r in range(ws.nrows):
                sampler.add(ws.row_values(r))
            sheets.append(sampler.finish())
            book.unload_sheet(index)
    finally:
        book.release_resources()
    meta["sheet_names"] = [s.name for s in sheets]
    return sheets


_ODS_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_ODS_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_ODS_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"


class _CappedReader(io.RawIOBase):
    """A zip entry stream that refuses to give more than `limit` bytes."""

    def __init__(self, raw: IO[bytes], limit: int, name: str) -> None:
        self._raw = raw
        self._left = limit
        self._name = name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(min(len(buffer), 1 << 16))
        self._left -= len(data)
        if self._left < 0:
            raise HostileInput(f"{self._name} expands past the archive size limit")
        buffer[: len(data)] = data
        return len(data)


def read_ods(path: Path, settings: Settings, meta: dict[str, Any]) -> list[Sheet]:
    check_archive(path, settings, what="spreadsheet")

    sheets: list[Sheet] = []
    try:
        with zipfile.ZipFile(path) as zf, zf.open("content.xml") as raw:
            stream = io.BufferedReader(
                _CappedReader(raw, settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES, "content.xml")
            )
            sheets = _ods_sheets(iterparse(stream, events=("start", "end")), settings)
    except KeyError as exc:
        raise InvalidInput("this ODS file has no content.xml; it is corrupt") from exc
    except DefusedXmlException as exc:
        raise HostileInput(f"this ODS file's XML uses forbidden constructs ({exc})") from exc
    except SyntaxError as exc:  # ParseError
        raise InvalidInput(f"this ODS file's XML is malformed ({exc})") from exc
    meta["sheet_names"] = [s.name for s in sheets]
    return sheets


def _ods_sheets(events: Iterator[tuple[str, Any]], settings: Settings) -> list[Sheet]:
    sheets: list[Sheet] = []
    sampler: RowSampler | None = None
    row: list[str] = []
    cap = settings.MAX_COLUMNS + 1
    root = None
    for event, elem in events:
        tag = elem.tag
        if root is None:
            root = elem
        if event == "start":
            if tag == _ODS_TABLE + "table":
                sampler = RowSampler(settings, elem.get(_ODS_TABLE + "name"))
            elif tag == _ODS_TABLE + "table-row":
                row = []
            continue
        if tag in (_ODS_TABLE + "table-cell", _ODS_TABLE + "covered-table-cell"):
            repeat = int(elem.get(_ODS_TABLE + "number-columns-repeated", "1") or 1)
            value = _ods_value(elem)
            if value or len(row) < cap:
                row.extend([value] * min(repeat, max(cap - len(row), 1)))
            elem.clear()
        elif tag == _ODS_TABLE + "table-row" and sampler is not None:
            repeat = int(elem.get(_ODS_TABLE + "number-rows-repeated", "1") or 1)
            if row_width(row):
                for _ in range(repeat):
                    sampler.add(row)
            elem.clear()
        elif tag == _ODS_TABLE + "table" and sampler is not None:
            sheets.append(sampler.finish())
            sampler = None
            elem.clear()
            if root is not None:
                root.clear()
    return sheets


def _ods_value(cell: Any) -> str:
    value = cell.get(_ODS_OFFICE + "value")
    kind = cell.get(_ODS_OFFICE + "value-type")
    paragraphs = ["".join(p.itertext()) for p in cell.iter(_ODS_TEXT + "p")]
    text = "\n".join(paragraphs)
    if text:
        return text
    if kind in ("float", "currency", "percentage") and value is not None:
        return str(value)
    return cell.get(_ODS_OFFICE + "date-value") or cell.get(_ODS_OFFICE + "boolean-value") or ""
