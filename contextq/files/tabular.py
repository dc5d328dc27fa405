"""Tables: CSV/TSV, XLSX/XLSM, XLS, ODS → one markdown table per sheet.

Each sheet shows its header, the first DEFAULT_ROWS_HEAD and the last
DEFAULT_ROWS_TAIL data rows (the tail kept in a bounded deque), at most
MAX_COLUMNS columns and MAX_CELL_LENGTH characters per cell, and a line
with its exact totals.

Rows: in workbooks, a row with no value is not a row. In CSV, a row is a
record as csv.reader yields it (a quoted field may span lines); a blank line
between rows is an empty row, blank lines before the header and at the end
of the file are not rows.

CSV: the dialect is sniffed on a sample (fallback by extension); the head is
read with the csv module; the exact record count comes from a byte scan
(`_scan_records`): `bytes.count` per 1 MiB chunk, stepping from quote to
quote with `bytes.find` only in chunks that hold one, so a 1 GB file costs
about one raw newline-counting pass. The tail is parsed from a record start
found near the end. Encodings that are not ASCII-compatible, escape
characters and lone CRs take the plain csv.reader path. The csv module's
field limit (131072 characters) stays as it is: a longer field or a
never-closed quote is a clear failure, never an unbounded read.

XLSX/XLSM are streamed by `xlsx_stream` (expat, DTDs refused, byte caps);
XLS goes through xlrd (on_demand, one sheet loaded at a time). ODS is read by
streaming `content.xml` through defusedxml's iterparse with a byte cap (not
odfpy: it builds the whole document tree in memory).
"""

from __future__ import annotations

import bisect
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

from contextq import tokens
from contextq.errors import HostileInput, InputTooLarge, InvalidInput
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.files.safety import check_archive
from contextq.files.text import file_tokens, read_sample, sniff_encoding
from contextq.settings import Settings

SCAN_CHUNK_BYTES = 1 << 20
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
        width = _width(row)
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
    if sniffed.delimiter not in ",;\t|" or sniffed.quotechar not in ('"', "'"):
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
    sampler = _RowSampler(settings, csv_blank_rows=True)
    need = 1 + settings.DEFAULT_ROWS_HEAD + settings.DEFAULT_ROWS_TAIL + 1
    with io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="") as fh:
        reader = csv.reader(_bounded_lines(fh), dialect)
        seen = 0
        for row in _rows(reader, sampler):
            sampler.add(row)
            seen += 1 if _width(row) else 0
            if seen >= need:
                break
        else:
            return sampler.finish()  # the whole file was read: small
        if not _fast_ok(encoding, dialect):
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
    sheet.total_rows = max(scan.records - scan.trailing_blank - sampler.leading_blank - 1, 0)
    sheet.tail = _csv_tail(path, encoding, dialect, scan, settings)
    return sheet


def _csv_all(
    path: Path, encoding: str, dialect: Any, settings: Settings, meta: dict[str, Any]
) -> Sheet:
    sampler = _RowSampler(settings, csv_blank_rows=True)
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
    """The last DEFAULT_ROWS_TAIL rows: parsed from a record start near the end of the
    file, found from the last chunk checkpoint with the quoted-field regex."""
    want = settings.DEFAULT_ROWS_TAIL
    if not want or not scan.checkpoints:
        return []
    quote = (dialect.quotechar or '"').encode()
    delimiter = dialect.delimiter.encode()
    size = path.stat().st_size
    rows: deque[list[str]] = deque()
    for offset, _ in reversed(scan.checkpoints):
        if size - offset > TAIL_WINDOW_MAX_BYTES:
            break  # rows this long: show fewer tail rows rather than read on
        with path.open("rb") as fh:
            fh.seek(max(offset - 1, 0))
            prev = fh.read(1)[0] if offset else 0x0A
            data = fh.read()
        spans = _quoted_spans(data, prev, quote, delimiter)
        # the checkpoint may fall inside a record: the first whole one starts after a newline
        first = 0 if prev == 0x0A else _record_start_after(data, 1, spans)
        back = 64 * 1024
        while True:
            start = max(_record_start_after(data, max(len(data) - back, 0), spans), first)
            rows = _parse_tail(data[start:], encoding, dialect, scan, want)
            if len(rows) >= want or start == first:
                break
            back *= 4
        if len(rows) >= want or offset == 0:
            break
    sampler = _RowSampler(settings)
    return [sampler.cells(r, _width(r)) for r in rows]


def _record_start_after(data: bytes, pos: int, spans: list[tuple[int, int]]) -> int:
    """The first record start at or after `pos` (just past a newline outside quotes)."""
    if pos == 0:
        return 0
    while True:
        nl = data.find(b"\n", pos - 1)
        if nl < 0:
            return len(data)
        i = bisect.bisect_right(spans, (nl, len(data) + 1)) - 1
        if i >= 0 and spans[i][0] < nl < spans[i][1]:
            pos = spans[i][1] + 1  # inside a quoted field: look after it
            continue
        return nl + 1


def _parse_tail(
    data: bytes, encoding: str, dialect: Any, scan: _ScanResult, want: int
) -> deque[list[str]]:
    text = data.decode(encoding, errors="replace")
    rows: deque[list[str]] = deque(maxlen=want + scan.trailing_blank)
    try:
        rows.extend(csv.reader(io.StringIO(text, newline=""), dialect))
    except csv.Error as exc:
        raise _csv_error(exc, scan.records) from exc
    for _ in range(min(scan.trailing_blank, len(rows))):
        rows.pop()
    while len(rows) > want:
        rows.popleft()
    return rows


class _FastScanUnsupported(Exception):
    """The byte scan cannot count this file exactly; csv.reader must."""


@dataclass
class _ScanResult:
    records: int  # what csv.reader would yield, blank lines included
    trailing_blank: int  # blank records at the end of the file
    ends_in_quote: bool
    checkpoints: list[tuple[int, bool]]  # (chunk start offset, inside quotes there)


MAX_SCAN_CARRY = 32 << 20  # one quoted field this long: let csv.reader (and its limit) judge


@functools.cache
def _quoted_field(quote: bytes, delimiter: bytes) -> re.Pattern[bytes]:
    """A quoted field as csv.reader reads it: the quote opens only at a field start, `""`
    is an escaped quote, and a field still open at the end of the buffer runs to `\\Z`.
    The quote comes first so the regex engine can jump from quote to quote."""
    q, d = re.escape(quote), re.escape(delimiter)
    return re.compile(
        q
        + rb"(?<=["
        + d
        + rb"\r\n]"
        + q
        + rb")(?:[^"
        + q
        + rb"]+|"
        + q
        + q
        + rb")*(?:"
        + q
        + rb"|\Z)"
    )


def _scan_records(path: Path, *, quote: bytes, delimiter: bytes) -> _ScanResult:
    """Exact count of the records csv.reader would yield, in about one `bytes.count` pass.

    A record ends at a newline outside quotes. A chunk without a quote character
    is counted with `bytes.count`; in one with quotes, the quoted fields are found
    by one regex (C speed, jumping from quote to quote) and the newlines inside
    them subtracted. A field still open at a chunk's end is carried into the next.
    """
    newlines = 0
    prev = 0x0A  # a virtual newline before the file
    checkpoints: list[tuple[int, bool]] = []
    carry = b""
    offset = 0
    ends_in_quote = False
    trailing_newlines = 0  # newlines in the run of CR/LF that ends what was read so far
    content = False  # anything but line ends seen yet
    with path.open("rb") as fh:
        while True:
            raw = fh.read(SCAN_CHUNK_BYTES)
            buf = carry + raw if carry else raw
            if not buf:
                break
            eof = not raw
            # trailing quotes and CRs mean nothing until the next byte is known (`""`, CRLF)
            end = len(buf) if eof else len(buf.rstrip(quote + b"\r"))
            cut = end
            inside = 0
            if buf.find(quote, 0, end) >= 0:
                inside, open_at = _quoted_newlines(buf, end, prev, quote, delimiter, eof=eof)
                if open_at >= 0:
                    cut = open_at  # a field still open: carry it from its quote
            if cut:
                if buf.find(b"\r", 0, cut) >= 0:
                    _check_crlf(buf, cut)
                newlines += buf.count(b"\n", 0, cut) - inside
                checkpoints.append((offset, False))
                prev = buf[cut - 1]
                trailing_newlines, has_body = _trailing_newlines(buf, cut, trailing_newlines)
                content = content or has_body
            carry = buf[cut:]
            offset += cut
            if eof:
                ends_in_quote = bool(carry)
                break
            if len(carry) > MAX_SCAN_CARRY:
                raise _FastScanUnsupported
    if prev == 0x0D:
        raise _FastScanUnsupported  # the file ends in a lone CR
    records = newlines + (0 if prev == 0x0A else 1)
    # "a\n\n\n": the first newline ends a record, the other two are blank records
    trailing_blank = 0
    if prev == 0x0A:
        trailing_blank = trailing_newlines - 1 if content else trailing_newlines
    return _ScanResult(records, trailing_blank, ends_in_quote, checkpoints)


def _trailing_newlines(buf: bytes, cut: int, before: int) -> tuple[int, bool]:
    """Newlines in the CR/LF run that ends `buf[:cut]`, and whether anything else
    precedes the run in this chunk (`before`: the run ending the previous chunk, which
    goes on if this chunk is nothing but line ends)."""
    window = buf[max(cut - 4096, 0) : cut]
    body = len(window.rstrip(b"\r\n"))
    if not body and cut > len(window):  # over 4096 line ends in a row (rare)
        window = buf[:cut]
        body = len(window.rstrip(b"\r\n"))
    if body:
        return window.count(b"\n", body), True
    return before + window.count(b"\n"), False


_LONE_CR = re.compile(rb"\r(?!\n)")


def _check_crlf(buf: bytes, cut: int) -> None:
    """Refuse lone CRs (csv.reader ends lines there too): the slow path counts them."""
    lone = _LONE_CR.search(buf, 0, cut)
    if lone and lone.start() != cut - 1:
        raise _FastScanUnsupported


@functools.cache
def _quoted_field_at_start(quote: bytes) -> re.Pattern[bytes]:
    q = re.escape(quote)
    return re.compile(q + rb"(?:[^" + q + rb"]+|" + q + q + rb")*(?:" + q + rb"|\Z)")


def _quoted_newlines(
    buf: bytes, end: int, prev: int, quote: bytes, delimiter: bytes, *, eof: bool
) -> tuple[int, int]:
    """(newlines inside the quoted fields of `buf[:end]`, start of a field still open at
    `end` or -1). Steps from quote to quote with `bytes.find` (memchr speed); a quote at a
    field start (`prev` is the byte before `buf`) is matched to its close by one regex."""
    field = _quoted_field_at_start(quote)
    starts = (delimiter[0], 0x0A, 0x0D)
    inside = 0
    pos = buf.find(quote, 0, end)
    while pos >= 0:
        if (buf[pos - 1] if pos else prev) in starts:
            match = field.match(buf, pos, end)
            assert match is not None  # the pattern always matches at a quote
            if match.end() == end and not (eof and _closed(match.group(), quote[0])):
                return inside, pos
            inside += buf.count(b"\n", pos, match.end())
            pos = match.end()
        else:
            pos += 1  # a quote inside an unquoted field is a plain character
        pos = buf.find(quote, pos, end)
    return inside, -1


def _quoted_spans(data: bytes, prev: int, quote: bytes, delimiter: bytes) -> list[tuple[int, int]]:
    """(start, end) of the quoted fields in `data` (which starts outside quotes)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    if data[:1] == quote and prev in (delimiter[0], 0x0A, 0x0D):
        match = _quoted_field_at_start(quote).match(data)
        if match:
            spans.append(match.span())
            pos = match.end()
    spans.extend(m.span() for m in _quoted_field(quote, delimiter).finditer(data, pos))
    return spans


def _closed(match: bytes, q: int) -> bool:
    """Whether a quoted-field match ends with its closing quote (an odd run of quotes)."""
    run = len(match) - len(match.rstrip(bytes([q])))
    if run == len(match):  # only quotes: the opening one does not close anything
        run -= 1
    return run % 2 == 1


# ---------------------------------------------------------------- workbooks


def read_xlsx(path: Path, settings: Settings, meta: dict[str, Any]) -> list[Sheet]:
    """Every sheet, streamed (see `xlsx_stream`): exact rows even with no dimension record."""
    check_archive(path, settings, what="workbook")
    from defusedxml import DefusedXmlException

    from contextq.files import xlsx_stream

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
    sampler = _RowSampler(settings)

    def cells(row: list[Any] | None) -> list[str]:
        values = convert(row or [])
        return sampler.cells(values, _width(values))

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
        result = FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category="tabular",
            media_type=info.media_type,
            content=content,
            truncation=trunc,
            metadata=meta,
        )
        result.full_text_tokens = _full_text_tokens(path, kind, sheets, content, meta)
        return result


EXACT_TOKEN_COUNT_MAX_BYTES = 8 * 1024 * 1024
TOKEN_SAMPLE_BYTES = 128 * 1024


def _full_text_tokens(
    path: Path, kind: str, sheets: list[Sheet], content: str, meta: dict[str, Any]
) -> int:
    """`token_count` of a table is the tokens of its whole text, as SPEC §2 says.

    CSV/TSV up to 8 MiB: counted exactly. Larger ones: the first 128 KiB (whole
    lines) are counted exactly with the already loaded tokenizer and the rate is
    extrapolated to the file's size — counting 1 GB exactly would take a minute
    and loading the fast counter alone costs ~0.5 s and ~100 MB. Workbooks: tokens
    per shown row of the rendered view times the total rows. Estimates are flagged
    in metadata with their method.
    """
    if kind in ("csv", "tsv"):
        size = path.stat().st_size
        if size <= EXACT_TOKEN_COUNT_MAX_BYTES:
            return file_tokens(path)[0]
        sample = read_sample(path, TOKEN_SAMPLE_BYTES)
        cut = sample.rfind(b"\n") + 1 or len(sample)
        text = sample[:cut].decode(sniff_encoding(sample), errors="replace")
        n = len(tokens.get_encoding().encode_ordinary(text))
        meta["token_count_exact"] = False
        meta["token_count_method"] = f"extrapolated from the first {cut} of {size} bytes"
        return round(n * size / max(cut, 1))
    shown = sum(len(s.head) + len(s.tail) for s in sheets)
    total = sum(s.total_rows for s in sheets)
    rendered = len(tokens.get_encoding().encode_ordinary(content))
    if shown >= total:
        return rendered
    meta["token_count_exact"] = False
    meta["token_count_method"] = f"tokens per shown row ({shown}) times total rows ({total})"
    return round(rendered * total / max(shown, 1))
