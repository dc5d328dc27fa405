"""A streaming XLSX/XLSM reader: exact row counts, head and tail rows, bounded memory.

openpyxl's read-only mode took 10 s to its first row and 1.5 GB of memory on a
200 000-row sheet written in write-only mode (no dimension record). This
reader streams each sheet's XML through expat in 64 KiB pieces, keeps only
the raw cells of the header, head and tail rows, then looks up just the
shared strings those rows use in a second streamed pass. DTDs and entity
declarations are refused (XML bombs); every zip entry is read with a byte cap.
Dates are recognised from the cell styles with openpyxl's own helpers.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from xml.parsers import expat

from defusedxml.ElementTree import fromstring

from contextq.errors import HostileInput, InvalidInput
from contextq.files.safety import bounded_read

SMALL_PART_BYTES = 64 << 20  # workbook.xml, rels, styles.xml
FEED_BYTES = 64 * 1024

# a raw cell: (column index, type attribute, style index, text); converted at the end
RawCell = tuple[int, str, int, str]


@dataclass
class RawSheet:
    name: str
    header: list[RawCell] | None = None
    head: list[list[RawCell]] = field(default_factory=list)
    tail: deque[list[RawCell]] = field(default_factory=deque)
    total_rows: int = 0
    total_columns: int = 0


class _Stop(Exception):
    """Control flow: enough rows were read."""


def _refuse_dtd(*_: Any) -> None:
    raise HostileInput("this workbook's XML declares a DTD or entities; it is refused")


def _refuse_external(*_: Any) -> int:
    raise HostileInput("this workbook's XML refers to an external entity; it is refused")


def _parser() -> Any:
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = _refuse_dtd
    parser.EntityDeclHandler = _refuse_dtd
    parser.ExternalEntityRefHandler = _refuse_external
    return parser


def _local(tag: str) -> str:
    return tag.rsplit(" ", 1)[-1]


def _feed(parser: Any, stream: IO[bytes], limit: int, name: str) -> None:
    read = 0
    while chunk := stream.read(FEED_BYTES):
        read += len(chunk)
        if read > limit:
            raise HostileInput(f"workbook part {name} expands past {limit} bytes")
        parser.Parse(chunk, False)
    parser.Parse(b"", True)


def _column(ref: str) -> int:
    """0-based column of a cell reference like `AB12`."""
    col = 0
    for ch in ref:
        if "A" <= ch <= "Z":
            col = col * 26 + (ord(ch) - 64)
        else:
            break
    return col - 1


def _sheet_parts(zf: zipfile.ZipFile) -> list[tuple[str, str]]:
    """(sheet name, zip path of its XML) in workbook order."""
    workbook = fromstring(bounded_read(zf, "xl/workbook.xml", SMALL_PART_BYTES))
    rels_xml = fromstring(bounded_read(zf, "xl/_rels/workbook.xml.rels", SMALL_PART_BYTES))
    targets = {
        rel.get("Id"): rel.get("Target", "")
        for rel in rels_xml.iter()
        if _local(rel.tag.replace("}", " ")) == "Relationship"
    }
    parts: list[tuple[str, str]] = []
    for el in workbook.iter():
        if _local(el.tag.replace("}", " ")) != "sheet":
            continue
        rid = next((v for k, v in el.attrib.items() if k.endswith("}id")), None)
        target = targets.get(rid, "")
        if not target:
            continue
        path = target.lstrip("/") if target.startswith("/") else posixpath.join("xl", target)
        parts.append((el.get("name", ""), posixpath.normpath(path)))
    return parts


def _date_styles(zf: zipfile.ZipFile) -> set[int]:
    """Indices of cell styles whose number format is a date or time."""
    from openpyxl.styles.numbers import BUILTIN_FORMATS, is_date_format  # noqa: PLC0415 - openpyxl

    try:
        styles = fromstring(bounded_read(zf, "xl/styles.xml", SMALL_PART_BYTES))
    except KeyError:
        return set()
    custom: dict[int, str] = {}
    xfs: list[int] = []
    for el in styles.iter():
        tag = _local(el.tag.replace("}", " "))
        if tag == "numFmt":
            custom[int(el.get("numFmtId", "0"))] = el.get("formatCode", "")
        elif tag == "cellXfs":
            xfs.extend(
                int(xf.get("numFmtId", "0"))
                for xf in el
                if _local(xf.tag.replace("}", " ")) == "xf"
            )
    dates = set()
    for index, fmt_id in enumerate(xfs):
        code = custom.get(fmt_id) or BUILTIN_FORMATS.get(fmt_id, "")
        if code and is_date_format(code):
            dates.add(index)
    return dates


class _SheetReader:
    """expat handlers that count rows and keep header, head and tail raw cells."""

    def __init__(
        self, sheet: RawSheet, head: int, tail: int, max_columns: int, stop_after: int | None
    ) -> None:
        self.sheet = sheet
        self.head_n = head
        self.max_columns = max_columns
        self.sheet.tail = deque(maxlen=tail or 1)
        self.keep_tail = tail > 0
        self.stop_after = stop_after
        self.row: list[RawCell] = []
        self.cell: list[Any] | None = None  # [col, type, style, text parts]
        self.text_on = False
        self.next_col = 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        name = _local(tag)
        if name == "c":
            ref = attrs.get("r")
            col = _column(ref) if ref else self.next_col
            self.next_col = col + 1
            self.cell = [col, attrs.get("t", "n"), int(attrs.get("s", "0") or 0), []]
        elif name in ("v", "t") and self.cell is not None:
            self.text_on = True
        elif name == "rPh":  # phonetic hints inside inline strings are not the value
            self.text_on = False
        elif name == "row":
            self.row = []
            self.next_col = 0

    def end(self, tag: str) -> None:
        name = _local(tag)
        if name in ("v", "t"):
            self.text_on = False
        elif name == "c" and self.cell is not None:
            col, kind, style, parts = self.cell
            if parts and col < self.max_columns + 1:
                self.row.append((col, kind, style, "".join(parts)))
            elif parts:
                self.row.append((col, "n", 0, ""))  # past the column cap: width only
            self.cell = None
        elif name == "row":
            self._row_done()

    def text(self, data: str) -> None:
        if self.text_on and self.cell is not None:
            self.cell[3].append(data)

    def _row_done(self) -> None:
        row = self.row
        if not row:
            return
        sheet = self.sheet
        sheet.total_columns = max(sheet.total_columns, row[-1][0] + 1)
        if sheet.header is None:
            sheet.header = row
            return
        sheet.total_rows += 1
        if len(sheet.head) < self.head_n:
            sheet.head.append(row)
        elif self.keep_tail:
            sheet.tail.append(row)
        if self.stop_after is not None and sheet.total_rows >= self.stop_after:
            raise _Stop


def read_raw_sheets(
    zf: zipfile.ZipFile,
    *,
    head: int,
    tail: int,
    max_columns: int,
    part_limit: int,
    stop_after: int | None = None,
) -> list[RawSheet]:
    sheets: list[RawSheet] = []
    for name, part in _sheet_parts(zf):
        sheet = RawSheet(name)
        reader = _SheetReader(sheet, head, tail, max_columns, stop_after)
        parser = _parser()
        parser.StartElementHandler = reader.start
        parser.EndElementHandler = reader.end
        parser.CharacterDataHandler = reader.text
        try:
            with zf.open(part) as stream:
                _feed(parser, stream, part_limit, part)
        except _Stop:
            sheets.append(sheet)
            break
        except KeyError as exc:
            raise InvalidInput(f"this workbook lists a sheet {name!r} that is missing") from exc
        except expat.ExpatError as exc:
            raise InvalidInput(f"this workbook's sheet {name!r} is not valid XML ({exc})") from exc
        sheets.append(sheet)
    return sheets


def shared_strings(
    zf: zipfile.ZipFile, wanted: set[int], cap: int, part_limit: int
) -> dict[int, str]:
    """The shared strings at `wanted` indices (each cut at `cap` chars), streamed."""
    found: dict[int, str] = {}
    if not wanted:
        return found
    try:
        info = zf.getinfo("xl/sharedStrings.xml")
    except KeyError:
        return found
    state: dict[str, Any] = {"index": -1, "parts": [], "on": False, "phonetic": 0}

    def start(tag: str, _: dict[str, str]) -> None:
        name = _local(tag)
        if name == "si":
            state["index"] += 1
            state["parts"] = []
        elif name == "rPh":
            state["phonetic"] += 1
        elif name == "t" and not state["phonetic"]:
            state["on"] = state["index"] in wanted

    def end(tag: str) -> None:
        name = _local(tag)
        if name == "t":
            state["on"] = False
        elif name == "rPh":
            state["phonetic"] -= 1
        elif name == "si" and state["index"] in wanted:
            found[state["index"]] = "".join(state["parts"])[:cap]
            if len(found) == len(wanted):
                raise _Stop

    def text(data: str) -> None:
        if state["on"]:
            state["parts"].append(data)

    parser = _parser()
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        with zf.open(info) as stream:
            _feed(parser, stream, part_limit, "xl/sharedStrings.xml")
    except _Stop:
        pass
    except expat.ExpatError as exc:
        raise InvalidInput(f"this workbook's shared strings are not valid XML ({exc})") from exc
    return found


def convert_row(row: list[RawCell], strings: dict[int, str], dates: set[int]) -> list[str]:
    """Display strings, one per column up to the row's last cell."""
    if not row:
        return []
    out = [""] * (row[-1][0] + 1)
    for col, kind, style, text in row:
        out[col] = _value(kind, style, text, strings, dates)
    return out


def _value(kind: str, style: int, text: str, strings: dict[int, str], dates: set[int]) -> str:
    if kind == "s":
        index = text.strip()
        return strings.get(int(index), "") if index.isdigit() else ""
    if kind == "b":
        return "TRUE" if text.strip() == "1" else "FALSE"
    if kind in ("str", "inlineStr", "e", "d"):
        return text
    return _number(text, style in dates)


def _number(text: str, is_date: bool) -> str:
    try:
        number = float(text)
    except ValueError:
        return text
    if is_date:
        from openpyxl.utils.datetime import from_excel  # noqa: PLC0415

        try:
            return str(from_excel(number).isoformat(sep=" "))
        except (ValueError, OverflowError):
            return text
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return text


def wanted_strings(sheets: list[RawSheet]) -> set[int]:
    wanted: set[int] = set()
    for sheet in sheets:
        rows = ([sheet.header] if sheet.header else []) + sheet.head + list(sheet.tail)
        for row in rows:
            for _, kind, _, text in row:
                if kind == "s" and text.strip().isdigit():
                    wanted.add(int(text))
    return wanted


def open_workbook(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InvalidInput(f"this workbook is not a valid zip container ({exc})") from exc


def first_rows(path: Path, n: int = 20) -> list[list[str]]:
    """The header and first `n` rows of the first sheet (what a reader shows first)."""
    with open_workbook(path) as zf:
        sheets = read_raw_sheets(
            zf, head=n, tail=0, max_columns=50, part_limit=1 << 40, stop_after=n
        )
        if not sheets:
            return []
        strings = shared_strings(zf, wanted_strings(sheets), 500, 1 << 40)
        dates = _date_styles(zf)
    sheet = sheets[0]
    rows = ([sheet.header] if sheet.header else []) + sheet.head
    return [convert_row(r, strings, dates) for r in rows]


Converter = Callable[[list[RawCell]], list[str]]


def read_workbook(
    path: Path, *, head: int, tail: int, max_columns: int, max_cell: int, part_limit: int
) -> tuple[list[RawSheet], Converter]:
    """Every sheet's raw rows and totals, and a converter to display strings."""
    with open_workbook(path) as zf:
        try:
            sheets = read_raw_sheets(
                zf, head=head, tail=tail, max_columns=max_columns, part_limit=part_limit
            )
            strings = shared_strings(zf, wanted_strings(sheets), max_cell, part_limit)
            dates = _date_styles(zf)
        except KeyError as exc:
            raise InvalidInput(f"this workbook is missing a required part ({exc})") from exc
        except SyntaxError as exc:  # defusedxml/ElementTree parse errors of the small parts
            raise InvalidInput(f"this workbook's XML is malformed ({exc})") from exc

    def convert(row: list[RawCell]) -> list[str]:
        return convert_row(row, strings, dates)

    return sheets, convert
