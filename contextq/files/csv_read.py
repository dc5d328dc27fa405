"""CSV/TSV → a sampled sheet: header, head and tail rows, and the exact row count.

The dialect is sniffed on a sample (fallback by extension); the head is read with the
csv module; the exact record count comes from the byte scan (`csv_scan`); the tail is
parsed from a record start found near the end. Encodings that are not ASCII-compatible,
escape characters and lone CRs take the plain csv.reader path. The csv module's field
limit (131072 characters) stays as it is: a longer field or a never-closed quote is a
clear failure, never an unbounded read.
"""

from __future__ import annotations

import bisect
import csv
import io
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from contextq.errors import InputTooLarge, InvalidInput
from contextq.files.csv_scan import FastScanUnsupported, ScanResult, quoted_spans, scan_records
from contextq.files.registry import StreamInfo
from contextq.files.table_sheet import RowSampler, Sheet, row_width
from contextq.files.text import read_sample, sniff_encoding
from contextq.settings import Settings

MAX_LINE_CHARS = 8 << 20
TAIL_WINDOW_MAX_BYTES = 64 << 20  # one physical CSV line; past it the file is refused
_ASCII_COMPATIBLE = {"utf-8", "utf-8-sig", "ascii", "cp1252", "latin-1", "iso-8859-1"}

# ---------------------------------------------------------------- CSV


def sniff_dialect(sample: str, file_type: str) -> type[csv.Dialect] | csv.Dialect:
    """The CSV dialect of a decoded sample; the extension's (comma, tab) when unsure."""
    ext_delimiter = "\t" if file_type == "tsv" else ","
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


def bounded_lines(fh: IO[str]) -> Iterator[str]:
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


def _rows(reader: Iterable[list[str]], sampler: RowSampler) -> Iterator[list[str]]:
    try:
        yield from reader
    except csv.Error as exc:
        raise _csv_error(exc, sampler.sheet.total_rows + 1) from exc


def read_csv(path: Path, info: StreamInfo, settings: Settings, meta: dict[str, Any]) -> Sheet:
    sample_bytes = read_sample(path)
    encoding = sniff_encoding(sample_bytes)
    meta["encoding"] = encoding
    sample = sample_bytes.decode(encoding, errors="replace").lstrip("\ufeff")
    dialect = sniff_dialect(sample, info.file_type)
    meta["delimiter"] = dialect.delimiter
    sampler = RowSampler(settings, csv_blank_rows=True)
    need = 1 + settings.DEFAULT_ROWS_HEAD + settings.DEFAULT_ROWS_TAIL + 1
    with io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="") as fh:
        reader = csv.reader(bounded_lines(fh), dialect)
        seen = 0
        for row in _rows(reader, sampler):
            sampler.add(row)
            seen += 1 if row_width(row) else 0
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
        scan = scan_records(
            path, quote=(dialect.quotechar or '"').encode(), delimiter=dialect.delimiter.encode()
        )
    except FastScanUnsupported:
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
    sampler = RowSampler(settings, csv_blank_rows=True)
    with io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="") as fh:
        for row in _rows(csv.reader(bounded_lines(fh), dialect), sampler):
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
    path: Path, encoding: str, dialect: Any, scan: ScanResult, settings: Settings
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
        spans = quoted_spans(data, prev, quote, delimiter)
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
    sampler = RowSampler(settings)
    return [sampler.cells(r, row_width(r)) for r in rows]


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
    data: bytes, encoding: str, dialect: Any, scan: ScanResult, want: int
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
