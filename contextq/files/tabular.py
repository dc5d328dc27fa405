"""Tables: CSV/TSV, XLSX/XLSM, XLS, ODS → one markdown table per sheet.

Each sheet shows its header, the first DEFAULT_ROWS_HEAD and the last
DEFAULT_ROWS_TAIL data rows (the tail kept in a bounded deque), at most
MAX_COLUMNS columns and MAX_CELL_LENGTH characters per cell, and a line
with its exact totals. Rows that are entirely empty are not counted.

CSV: the dialect is sniffed on a sample (fallback by extension); the head is
read with the csv module; the exact record count comes from a byte scan
that only visits quote characters (`_scan_records`), so a 1 GB file costs
about one `bytes.count` pass; the tail is parsed from the last chunk
checkpoint. Encodings that are not ASCII-compatible, escape characters and
lone CRs take the plain csv.reader path. The csv module's field limit
(131072 characters) stays as it is: a longer field or a never-closed quote
is a clear failure, never an unbounded read.

ODS is read by streaming `content.xml` through defusedxml's iterparse with a
byte cap (no odfpy: it builds the whole document tree in memory).
"""

from __future__ import annotations

import csv
import functools
import io
import re
import zipfile
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from contextq.errors import HostileInput, InputTooLarge, InvalidInput
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.files.safety import check_archive
from contextq.files.text import read_sample, sniff_encoding
from contextq.settings import Settings

SCAN_CHUNK_BYTES = 4 << 20
MAX_LINE_CHARS = 8 << 20
TAIL_WINDOW_MAX_BYTES = 64 << 20  # one physical CSV line; past it the file is refused
_ASCII_COMPATIBLE = {"utf-8", "utf-8-sig", "ascii", "cp1252", "latin-1", "iso-8859-1"}


@dataclass
class Sheet:
    name: str | None
    header: list[str] = field(default_factory=list)
    head: list[list[str]] = field(default_factory=list)
    tail: list[list[str]] = field(default_factory=list)
    total_rows: int = 0  # data rows, header not counted
    total_columns: int = 0


class _RowSampler:
    """First row as header, then head rows, the last `tail` rows in a deque, and counts."""

    def __init__(
        self, settings: Settings, name: str | None = None, *, keep_blank_cells: bool = False
    ) -> None:
        self.settings = settings
        self.keep_blank_cells = keep_blank_cells  # CSV: `,,` is a row; only `[]` is not
        self.sheet = Sheet(name)
        self._tail: deque[list[str]] = deque(maxlen=settings.DEFAULT_ROWS_TAIL or 1)
        self._has_header = False

    def add(self, row: Sequence[Any]) -> None:
        width = _width(row)
        if width == 0 and not (self.keep_blank_cells and row):
            return
        sheet = self.sheet
        sheet.total_columns = max(sheet.total_columns, width)
        if not self._has_header:
            sheet.header = self.cells(row, width)
            self._has_header = True
            return
        sheet.total_rows += 1
        if len(sheet.head) < self.settings.DEFAULT_ROWS_HEAD:
            sheet.head.append(self.cells(row, width))
        elif self.settings.DEFAULT_ROWS_TAIL:
            self._tail.append(self.cells(row, width))

    def cells(self, row: Sequence[Any], width: int) -> list[str]:
        keep = min(width, self.settings.MAX_COLUMNS)
        # cells are stored capped at one char past the limit; rendering counts the cut
        limit = self.settings.MAX_CELL_LENGTH + 1
        return [_cell_text(row[i])[:limit] if i < len(row) else "" for i in range(keep)]

    def finish(self) -> Sheet:
        self.sheet.tail = list(self._tail) if self.settings.DEFAULT_ROWS_TAIL else []
        return self.sheet


def _width(row: Sequence[Any]) -> int:
    n = len(row)
    while n and (row[n - 1] is None or row[n - 1] == ""):
        n -= 1
    return n


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------- rendering


_MD_ESCAPE = re.compile(r"[|\r\n\\]")


def _md(cell: str, limit: int, trunc: TruncationInfo) -> str:
    if len(cell) > limit:
        trunc.count("cells truncated")
        cell = cell[:limit] + "…"
    return _MD_ESCAPE.sub(lambda m: {"|": r"\|", "\\": "\\\\"}.get(m.group(), " "), cell)


def render(sheets: list[Sheet], settings: Settings, trunc: TruncationInfo) -> str:
    parts: list[str] = []
    shown_rows = total_rows = 0
    shown_cols = total_cols = 0
    for sheet in sheets:
        shown = len(sheet.head) + len(sheet.tail)
        shown_rows += shown
        total_rows += sheet.total_rows
        cols = min(sheet.total_columns, settings.MAX_COLUMNS)
        shown_cols = max(shown_cols, cols)
        total_cols = max(total_cols, sheet.total_columns)
        parts.append(_render_sheet(sheet, cols, settings, trunc, multi=len(sheets) > 1))
    trunc.record("rows", shown_rows, total_rows)
    trunc.record("columns", shown_cols, total_cols)
    return "\n\n".join(parts)


def _render_sheet(
    sheet: Sheet, cols: int, settings: Settings, trunc: TruncationInfo, *, multi: bool
) -> str:
    limit = settings.MAX_CELL_LENGTH
    lines: list[str] = []
    if multi or sheet.name:
        lines.append(f"## Sheet: {_md(sheet.name or '', 200, TruncationInfo())}")
    shown = len(sheet.head) + len(sheet.tail)
    summary = f"Total rows: {sheet.total_rows} (header not counted); columns: {sheet.total_columns}"
    if shown < sheet.total_rows:
        first = len(sheet.head)
        summary += (
            f". Showing rows 1-{first} and {sheet.total_rows - len(sheet.tail) + 1}"
            f"-{sheet.total_rows}"
        )
    if cols < sheet.total_columns:
        summary += f"; first {cols} columns shown"
    lines.append(summary + ".")
    if cols == 0:
        lines.append("(empty sheet)")
        return "\n".join(lines)
    lines.append("")

    def row_md(row: list[str]) -> str:
        cells = [_md(row[i] if i < len(row) else "", limit, trunc) for i in range(cols)]
        return "| " + " | ".join(cells) + " |"

    lines.append(row_md(sheet.header))
    lines.append("|" + " --- |" * cols)
    lines.extend(row_md(r) for r in sheet.head)
    if sheet.tail:
        if shown < sheet.total_rows:
            skipped = sheet.total_rows - shown
            gap = [f"… {skipped} rows omitted …"] + [""] * (cols - 1)
            lines.append("| " + " | ".join(gap) + " |")
        lines.extend(row_md(r) for r in sheet.tail)
    return "\n".join(lines)


# ---------------------------------------------------------------- CSV


def _dialect(sample: str, ext_delimiter: str) -> type[csv.Dialect] | csv.Dialect:
    fallback: type[csv.Dialect] = csv.excel_tab if ext_delimiter == "\t" else csv.excel
    cut = sample.rfind("\n")
    sample = sample[: cut if cut > 0 else len(sample)][:32768]
    if not sample.strip():
        return fallback
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return fallback
    if sniffed.delimiter not in ",;\t|" or sniffed.quotechar not in ("\"", "'"):
        return fallback
    if ext_delimiter == "\t" and sniffed.delimiter != "\t" and "\t" in sample:
        return fallback
    sniffed.doublequote = True  # the Sniffer guesses False on files without `""`
    return sniffed


def _bounded_lines(fh: IO[str]) -> Iterator[str]:
    """Physical lines for csv.reader, refusing one over MAX_LINE_CHARS (never unbounded)."""
    while True:
        line = fh.readline(MAX_LINE_CHARS)
        if not line:
            return
        if len(line) >= MAX_LINE_CHARS and not line.endswith(("\n", "\r")):
            raise InputTooLarge(
                f"a line of this CSV is over {MAX_LINE_CHARS} characters; "
                "it is not a table we can read (check the delimiter and quoting)"
            )
        if "\x00" in line:
            line = line.replace("\x00", "")
        yield line


def _csv_error(exc: csv.Error, row: int) -> InvalidInput:
    text = str(exc)
    if "field larger than field limit" in text:
        return InvalidInput(
            f"a CSV field near data row {row} is over {csv.field_size_limit()} characters, "
            "or a quote is opened and never closed; fix the quoting or split the field"
        )
    return InvalidInput(f"this CSV cannot be parsed near data row {row}: {text}")


def _rows(reader: Iterable[list[str]], sampler: _RowSampler) -> Iterator[list[str]]:
    try:
        yield from reader
    except csv.Error as exc:
        raise _csv_error(exc, sampler.sheet.total_rows + 1) from exc


def read_csv(path: Path, info: StreamInfo, settings: Settings, meta: dict[str, Any]) -> Sheet:
    sample_bytes = read_sample(path)
    encoding = sniff_encoding(sample_bytes)
    meta["encoding"] = encoding
    sample = sample_bytes.decode(encoding, errors="replace").lstrip("\ufeff")
    dialect = _dialect(sample, "\t" if info.file_type == "tsv" else ",")
    meta["delimiter"] = dialect.delimiter
    sampler = _RowSampler(settings, keep_blank_cells=True)
    need = 1 + settings.DEFAULT_ROWS_HEAD + settings.DEFAULT_ROWS_TAIL + 1
    with io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="") as fh:
        reader = csv.reader(_bounded_lines(fh), dialect)
        seen = 0
        for row in _rows(reader, sampler):
            sampler.add(row)
            seen += 1 if row else 0
            if seen >= need:
                break
        else:
            return sampler.finish()  # the whole file was read: small
        fast = _fast_ok(encoding, dialect)
        if not fast:
            for row in _rows(reader, sampler):
                sampler.add(row)
            meta["count_method"] = "csv.reader"
            return sampler.finish()
    try:
        scan = _scan_records(
            path, quote=(dialect.quotechar or '"').encode(), delimiter=dialect.delimiter.encode()
        )
    except _FastScanUnsupported:
        return _csv_all(path, encoding, dialect, settings, meta)
    if scan.ends_in_quote:
        raise InvalidInput(
            "a quoted field in this CSV is opened and never closed; the file is cut or malformed"
        )
    meta["count_method"] = "byte scan"
    sheet = sampler.finish()
    sheet.total_rows = max(scan.records - 1, 0)
    sheet.tail = _csv_tail(path, encoding, dialect, scan, settings)
    return sheet


def _csv_all(
    path: Path, encoding: str, dialect: Any, settings: Settings, meta: dict[str, Any]
) -> Sheet:
    sampler = _RowSampler(settings, keep_blank_cells=True)
    with io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="") as fh:
        for row in _rows(csv.reader(_bounded_lines(fh), dialect), sampler):
            sampler.add(row)
    meta["count_method"] = "csv.reader"
    return sampler.finish()


def _fast_ok(encoding: str, dialect: Any) -> bool:
    return (
        encoding.lower().replace("_", "-") in _ASCII_COMPATIBLE
        and dialect.escapechar is None
        and dialect.doublequote
        and not dialect.skipinitialspace
        and dialect.quoting != csv.QUOTE_NONE
    )


def _csv_tail(
    path: Path, encoding: str, dialect: Any, scan: _ScanResult, settings: Settings
) -> list[list[str]]:
    want = settings.DEFAULT_ROWS_TAIL
    if not want:
        return []
    q = (dialect.quotechar or '"').encode()[0]
    d = dialect.delimiter.encode()[0]
    # start at a chunk checkpoint late enough to be cheap, early enough to hold `want` rows
    size = path.stat().st_size
    rows: deque[list[str]] = deque(maxlen=want)
    for offset, in_quote in reversed(scan.checkpoints):
        if size - offset > TAIL_WINDOW_MAX_BYTES:
            break  # rows this long: show fewer tail rows rather than read on
        with path.open("rb") as fh:
            fh.seek(max(offset - 1, 0))
            before = fh.read(1) if offset else b"\n"
            data = fh.read()
        start = _first_record_start(data, in_quote, before[0], q, d) if offset else 0
        if start < 0:
            continue
        text = data[start:].decode(encoding, errors="replace").replace("\x00", "")
        rows = deque(maxlen=want)
        try:
            for row in csv.reader(io.StringIO(text, newline=""), dialect):
                if row:
                    rows.append(row)
        except csv.Error as exc:
            raise _csv_error(exc, scan.records) from exc
        if len(rows) >= want or offset == 0:
            break
    sampler = _RowSampler(settings)
    return [sampler.cells(r, _width(r)) for r in rows]


def _first_record_start(data: bytes, in_quote: bool, prev: int, q: int, d: int) -> int:
    """Offset just after the first newline outside quotes in `data`, or -1."""
    pos = 0
    size = len(data)
    quote = bytes([q])
    while pos < size:
        qi = data.find(quote, pos)
        if not in_quote:
            ni = data.find(b"\n", pos, qi if qi >= 0 else size)
            if ni >= 0:
                return ni + 1
        if qi < 0:
            return -1
        if in_quote:
            if qi + 1 < size and data[qi + 1] == q:
                pos = qi + 2
                continue
            in_quote = False
        elif (data[qi - 1] if qi else prev) in (d, 0x0A, 0x0D):
            in_quote = True
        pos = qi + 1
    return -1


class _FastScanUnsupported(Exception):
    """The byte scan cannot count this file exactly; csv.reader must."""


@dataclass
class _ScanResult:
    records: int  # non-empty records, header included
    ends_in_quote: bool
    checkpoints: list[tuple[int, bool]]  # (chunk start offset, inside quotes there)


_BLANK_LINE = re.compile(rb"\n(?=\r?\n)")


MAX_SCAN_CARRY = 32 << 20  # one quoted field this long: let csv.reader (and its limit) judge


@functools.cache
def _quoted_field(quote: bytes, delimiter: bytes) -> re.Pattern[bytes]:
    """A quoted field as csv.reader reads it: the quote opens only at a field start, `""`
    is an escaped quote, and a field still open at the end of the buffer runs to `\\Z`.
    The quote comes first so the regex engine can jump from quote to quote."""
    q, d = re.escape(quote), re.escape(delimiter)
    return re.compile(q + rb"(?<=[" + d + rb"\r\n]" + q + rb")(?:[^" + q + rb"]+|" + q + q
                      + rb")*(?:" + q + rb"|\Z)")


def _scan_records(path: Path, *, quote: bytes, delimiter: bytes) -> _ScanResult:
    """Exact count of non-empty CSV records in about one `bytes.count` pass.

    A record ends at a newline outside quotes. Per chunk, the quoted fields are
    found by one regex (C speed, jumping from quote to quote) and the newlines
    inside them subtracted from the chunk's count. A field still open at a chunk's
    end is carried into the next. Chunks with blank lines (not records) take
    the exact quote-by-quote walk (`_count_quoted`).
    """
    field = _quoted_field(quote, delimiter)
    newlines = blanks = 0
    prev = 0x0A  # a virtual newline before the file: leading blank lines are not records
    checkpoints: list[tuple[int, bool]] = []
    carry = b""
    offset = 0
    ends_in_quote = False
    with path.open("rb") as fh:
        while True:
            raw = fh.read(SCAN_CHUNK_BYTES)
            buf = carry + raw if carry else raw
            if not buf:
                break
            eof = not raw
            # trailing quotes and CRs mean nothing until the next byte is known (`""`, CRLF)
            end = len(buf) if eof else len(buf.rstrip(quote + b"\r"))
            fields = field.findall(bytes([prev]) + buf[:end], 1)
            cut = end
            if fields and not _closed(fields[-1], quote[0]):
                cut = end - len(fields.pop())  # an open field: carry it from its quote
            if cut:
                n, b = _count_part(buf, cut, fields, prev, quote=quote, delimiter=delimiter)
                newlines += n
                blanks += b
                checkpoints.append((offset, False))
                prev = buf[cut - 1]
            carry = buf[cut:]
            offset += cut
            if eof:
                ends_in_quote = bool(carry)
                break
            if len(carry) > MAX_SCAN_CARRY:
                raise _FastScanUnsupported
    if prev == 0x0D:
        raise _FastScanUnsupported  # the file ends in a lone CR
    records = newlines - blanks + (0 if prev == 0x0A else 1)
    return _ScanResult(records=records, ends_in_quote=ends_in_quote, checkpoints=checkpoints)


def _closed(match: bytes, q: int) -> bool:
    """Whether a quoted-field match ends with its closing quote (an odd run of quotes)."""
    run = len(match) - len(match.rstrip(bytes([q])))
    if run == len(match):  # only quotes: the opening one does not close anything
        run -= 1
    return run % 2 == 1


def _count_part(
    buf: bytes, cut: int, fields: list[bytes], prev: int, *, quote: bytes, delimiter: bytes
) -> tuple[int, int]:
    """(newlines outside quotes, blank lines) in `buf[:cut]`, which starts and ends outside
    quotes."""
    crs = buf.count(b"\r", 0, cut)
    if crs and crs != buf.count(b"\r\n", 0, cut) + (1 if buf[cut - 1] == 0x0D else 0):
        raise _FastScanUnsupported  # lone CR line ends: csv.reader decides
    if (
        buf.find(b"\n\n", 0, cut) >= 0
        or buf.find(b"\n\r\n", 0, cut) >= 0
        or (prev == 0x0A and (buf[:1] == b"\n" or buf[:2] == b"\r\n"))
    ):
        n, b, _, _, _ = _count_quoted(
            buf[:cut], skip=0, next_byte=-1, prev=prev, in_quote=False, q=quote[0],
            d=delimiter[0],
        )
        return n, b
    inside = b"".join(fields).count(b"\n") if fields else 0
    return buf.count(b"\n", 0, cut) - inside, 0


def _count_plain(seg: bytes, prev: int) -> tuple[int, int, int]:
    """Newlines and blank lines of `seg`, which lies entirely outside quotes."""
    n = seg.count(b"\n")
    blanks = 0
    if n:
        if b"\n\n" in seg or b"\n\r\n" in seg:
            blanks = len(_BLANK_LINE.findall(seg))
        if prev == 0x0A and (seg[0] == 0x0A or seg[:2] == b"\r\n"):
            blanks += 1
    return n, blanks, seg[-1]


def _count_quoted(
    chunk: bytes, *, skip: int, next_byte: int, prev: int, in_quote: bool, q: int, d: int
) -> tuple[int, int, int, bool, int]:
    """Like `_count_plain`, stepping from quote to quote; returns the bytes of the next
    chunk already used (1 when this chunk's last quote and the next's first form `""`)."""
    newlines = blanks = 0
    pos = skip
    size = len(chunk)
    quote = bytes([q])
    while pos < size:
        idx = chunk.find(quote, pos)
        end = size if idx < 0 else idx
        if end > pos:
            if in_quote:
                prev = chunk[end - 1]
            else:
                n, b, prev = _count_plain(chunk[pos:end], prev)
                newlines += n
                blanks += b
        if idx < 0:
            break
        if in_quote:
            following = chunk[idx + 1] if idx + 1 < size else next_byte
            if following == q:  # `""`: an escaped quote inside the field
                prev = q
                pos = idx + 2
                continue
            in_quote = False
        elif prev in (d, 0x0A, 0x0D):
            in_quote = True  # a quote at the start of a field opens it
        # else: a quote inside an unquoted field is a plain character
        prev = q
        pos = idx + 1
    return newlines, blanks, prev, in_quote, max(pos - size, 0)


# ---------------------------------------------------------------- workbooks


def read_xlsx(path: Path, settings: Settings, meta: dict[str, Any]) -> list[Sheet]:
    check_archive(path, settings, what="workbook")
    import openpyxl

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise InvalidInput(
            f"this workbook cannot be opened: it is corrupt or not XLSX ({exc})"
        ) from exc
    sheets: list[Sheet] = []
    try:
        for ws in wb.worksheets:
            sampler = _RowSampler(settings, ws.title)
            for row in ws.iter_rows(values_only=True):
                sampler.add(row)
            sheets.append(sampler.finish())
    finally:
        wb.close()
    meta["sheet_names"] = [s.name for s in sheets]
    return sheets


def read_xls(path: Path, settings: Settings, meta: dict[str, Any]) -> list[Sheet]:
    import xlrd

    try:
        book = xlrd.open_workbook(str(path), on_demand=True)
    except xlrd.XLRDError as exc:
        raise InvalidInput(f"this XLS workbook cannot be read: {exc}") from exc
    sheets: list[Sheet] = []
    try:
        for index in range(book.nsheets):
            ws = book.sheet_by_index(index)
            sampler = _RowSampler(settings, ws.name)
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
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

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
    sampler: _RowSampler | None = None
    row: list[str] = []
    cap = settings.MAX_COLUMNS + 1
    root = None
    for event, elem in events:
        tag = elem.tag
        if root is None:
            root = elem
        if event == "start":
            if tag == _ODS_TABLE + "table":
                sampler = _RowSampler(settings, elem.get(_ODS_TABLE + "name"))
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
            if _width(row):
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


# ---------------------------------------------------------------- processor


class TabularProcessor:
    name = "tabular"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "tabular"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        settings = ctx.settings
        meta: dict[str, Any] = {}
        kind = info.file_type
        if kind in ("csv", "tsv"):
            sheets = [read_csv(path, info, settings, meta)]
        elif kind in ("xlsx", "xlsm"):
            sheets = read_xlsx(path, settings, meta)
        elif kind == "xls":
            sheets = read_xls(path, settings, meta)
        elif kind == "ods":
            sheets = read_ods(path, settings, meta)
        else:
            raise InvalidInput(f"no table reader for {kind}")
        trunc = TruncationInfo()
        content = render(sheets, settings, trunc)
        meta["sheets"] = len(sheets)
        meta["rows"] = sum(s.total_rows for s in sheets)
        meta["columns"] = max((s.total_columns for s in sheets), default=0)
        if len(sheets) > 1:
            meta["rows_per_sheet"] = {s.name or str(i): s.total_rows for i, s in enumerate(sheets)}
        return FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category="tabular",
            media_type=info.media_type,
            content=content,
            truncation=trunc,
            metadata=meta,
        )
