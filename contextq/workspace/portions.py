"""Later portions of a workspace file (docs/workspaces.md `?view=processed&offset=&limit=`).

The processed view of a file is cut for the context; an agent reads the rest in
portions: lines of text, code and structured files (a JSON document is indented by 2
first: a tool's compact JSON is one line), data rows of tables (the header row always
shown above them), pages of documents. `offset` counts from 0. The readers are
the file engine's own — encoding sniffing and incremental decoding (`files.text`), the
CSV dialect sniffer and bounded line reader (`files.csv_read`), the streaming XLSX
reader (`files.xlsx_stream`), the cached document conversion with its page boundaries
(`files.documents`) — so a portion reads exactly as processing reads the file; only the
slicing lives here. Rows are numbered as the table processors count them (a blank CSV
line between rows is an empty row; blank lines before the header and at the end are
not rows), so `offset=25000` is the 25 001st data row of a CSV whose metadata says
50 000 rows.

A portion stops early, at a line/row/page boundary, when its text would pass
`max_chars`; `next_offset` then says where to continue.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from contextq.errors import InvalidInput, ValidationFailed
from contextq.files import xlsx_stream
from contextq.files.csv_read import bounded_lines, sniff_dialect
from contextq.files.documents import cached_conversion
from contextq.files.markdown import markdown_table
from contextq.files.registry import ConversionCache, StreamInfo
from contextq.files.safety import check_archive
from contextq.files.text import iter_decoded, read_sample, sniff_encoding
from contextq.settings import Settings

Unit = Literal["lines", "rows", "pages"]
MAX_LIMIT: dict[str, int] = {"lines": 5000, "rows": 2000, "pages": 50}
TEXT_CATEGORIES = ("text", "code", "structured")


@dataclass(frozen=True)
class Portion:
    unit: Unit
    offset: int
    text: str
    returned: int  # lines / rows / pages in `text`
    next_offset: int | None  # where the next portion starts; None at the end
    total: int | None  # lines / rows / pages of the whole file, when this read reached the end
    truncated: bool  # stopped before `limit` because of `max_chars`, or a cell/line was cut
    sheet: str | None = None


def default_limit(unit: Unit, settings: Settings) -> int:
    if unit == "lines":
        return settings.MAX_LINES
    if unit == "rows":
        return settings.DEFAULT_ROWS_HEAD + settings.DEFAULT_ROWS_TAIL
    return 5


def unit_for(info: StreamInfo, *, paged: bool | None = None) -> Unit:
    """The unit portions of this kind of file come in (ValidationFailed when none)."""
    if info.file_type in ("csv", "tsv", "xlsx", "xlsm"):
        return "rows"
    if info.category == "document" and info.file_type != "zip":
        return "pages" if paged is not False else "lines"
    if info.category in TEXT_CATEGORIES:
        return "lines"
    raise ValidationFailed(
        f"a {info.file_type} file ({info.category}) has no text portions to read; "
        "GET it without `view` for its bytes, or with view=processed alone for its processed view",
        field="offset",
    )


def read_portion(
    path: Path,
    info: StreamInfo,
    *,
    offset: int,
    limit: int | None,
    settings: Settings,
    cache: ConversionCache | None = None,
    sheet: str | None = None,
) -> Portion:
    """Items `offset` … `offset + limit - 1` of the file at `path` (detected as `info`)."""
    if offset < 0:
        raise ValidationFailed("offset counts from 0", field="offset")
    unit = unit_for(info)
    if info.category == "document" and info.file_type != "zip":
        return _document_portion(
            path, info, offset=offset, limit=limit, settings=settings, cache=cache
        )
    count = _checked_limit(limit, unit, settings)
    if unit == "rows":
        if info.file_type in ("xlsx", "xlsm"):
            return _workbook_portion(path, offset, count, settings, sheet)
        return _csv_portion(path, info.file_type, offset, count, settings)
    if info.file_type == "json":
        indented = _indented_json(path, settings)
        if indented is not None:
            return _line_portion(indented, offset, count, settings.MAX_TOTAL_OUTPUT, len(indented))
    return _line_portion(_text_lines(path), offset, count, settings.MAX_TOTAL_OUTPUT)


def _indented_json(path: Path, settings: Settings) -> list[str] | None:
    """The lines of a JSON document indented by 2 (a tool's compact JSON is one line, no
    use to read in portions); None when it is too big to parse whole or is not JSON."""
    if path.stat().st_size > settings.MAX_JSON_PARSE_BYTES:
        return None

    try:
        with path.open("r", encoding=sniff_encoding(read_sample(path)), errors="strict") as fh:
            data = json.load(fh)
    except (ValueError, UnicodeError, RecursionError):
        return None
    return json.dumps(data, indent=2, ensure_ascii=False).split("\n")


def _checked_limit(limit: int | None, unit: Unit, settings: Settings) -> int:
    count = default_limit(unit, settings) if limit is None else limit
    if not 1 <= count <= MAX_LIMIT[unit]:
        raise ValidationFailed(
            f"limit must be between 1 and {MAX_LIMIT[unit]} {unit}", field="limit"
        )
    return count


# -- lines -------------------------------------------------------------------------------


def _text_lines(path: Path) -> Iterator[str]:
    pending = ""
    first = True
    for piece in iter_decoded(path, sniff_encoding(read_sample(path))):
        text = piece.lstrip("\ufeff") if first else piece
        first = False
        lines = (pending + text).split("\n")
        pending = lines.pop()
        for line in lines:
            yield line.removesuffix("\r")
    if pending:
        yield pending.removesuffix("\r")


def _line_portion(
    lines: Iterable[str], offset: int, limit: int, max_chars: int, known_total: int | None = None
) -> Portion:
    """Lines `offset` … `offset + limit - 1`; the total when the read reached the end (or
    `known_total`, for lines already in memory)."""
    taken: list[str] = []
    used = 0
    truncated = False
    index = -1
    for index, line in enumerate(lines):  # the last index counts the total
        if index < offset:
            continue
        if len(taken) >= limit:
            text = "\n".join(taken)
            return Portion("lines", offset, text, len(taken), index, known_total, truncated)
        shown = line
        if used + len(line) > max_chars:
            if taken:
                text = "\n".join(taken)
                return Portion("lines", offset, text, len(taken), index, known_total, True)
            shown, truncated = line[:max_chars] + " …[line cut]", True
        taken.append(shown)
        used += len(shown) + 1
    total = index + 1
    return Portion("lines", offset, "\n".join(taken), len(taken), None, total, truncated)


# -- rows --------------------------------------------------------------------------------


def _cells(row: list[Any], settings: Settings) -> tuple[list[str], bool]:
    cut = False
    out: list[str] = []
    for value in row[: settings.MAX_COLUMNS]:
        text = "" if value is None else str(value)
        if len(text) > settings.MAX_CELL_LENGTH:
            text, cut = text[: settings.MAX_CELL_LENGTH] + "…", True
        out.append(text)
    return out, cut or len(row) > settings.MAX_COLUMNS


def _csv_rows(path: Path, kind: str) -> tuple[list[str], Generator[list[str], None, None]]:
    """(header, data rows) as the table processor counts them, streamed."""
    sample = read_sample(path)
    encoding = sniff_encoding(sample)
    dialect = sniff_dialect(sample.decode(encoding, "replace").lstrip("\ufeff"), kind)
    fh = io.TextIOWrapper(path.open("rb"), encoding=encoding, errors="replace", newline="")
    reader = csv.reader(bounded_lines(fh), dialect)
    header: list[str] = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                header = [row[0].lstrip("\ufeff"), *row[1:]]
                break
    except csv.Error as exc:
        fh.close()
        raise InvalidInput(f"this CSV cannot be parsed before its header: {exc}") from exc
    return header, _data_rows(reader, fh)


def _data_rows(
    reader: Iterator[list[str]], fh: io.TextIOWrapper
) -> Generator[list[str], None, None]:
    pending_blank = 0
    number = 0
    try:
        for row in reader:
            if not row:
                pending_blank += 1  # an empty row only if a non-blank one follows
                continue
            for _ in range(pending_blank):
                number += 1
                yield []
            pending_blank = 0
            number += 1
            yield row
    except csv.Error as exc:
        raise InvalidInput(f"this CSV cannot be parsed near data row {number + 1}: {exc}") from exc
    finally:
        fh.close()


def _table_portion(
    header: list[Any],
    rows: Iterable[list[Any]],
    *,
    offset: int,
    limit: int,
    settings: Settings,
    sheet: str | None = None,
) -> Portion:
    head, truncated = _cells(header, settings)
    taken: list[list[str]] = []
    used = sum(len(c) + 3 for c in head)
    index = -1
    for index, row in enumerate(rows):  # the last index counts the total
        if index < offset:
            continue
        cells, cut = _cells(row, settings)
        size = sum(len(c) + 3 for c in cells)
        if len(taken) >= limit or (taken and used + size > settings.MAX_TOTAL_OUTPUT):
            stopped_early = len(taken) < limit
            text = markdown_table([head, *taken])
            return Portion(
                "rows", offset, text, len(taken), index, None, truncated or stopped_early, sheet
            )
        taken.append(cells)
        used += size
        truncated = truncated or cut
    text = markdown_table([head, *taken]) if head or taken else ""
    return Portion("rows", offset, text, len(taken), None, index + 1, truncated, sheet)


def _csv_portion(path: Path, kind: str, offset: int, limit: int, settings: Settings) -> Portion:
    header, rows = _csv_rows(path, kind)
    try:
        return _table_portion(header, rows, offset=offset, limit=limit, settings=settings)
    finally:
        rows.close()


def _workbook_portion(
    path: Path, offset: int, limit: int, settings: Settings, sheet: str | None
) -> Portion:
    check_archive(path, settings, what="workbook")
    sheets, convert = xlsx_stream.read_workbook(
        path,
        head=offset + limit + 1,
        tail=0,
        max_columns=settings.MAX_COLUMNS + 1,
        max_cell=settings.MAX_CELL_LENGTH + 1,
        part_limit=settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES,
    )
    names = [s.name for s in sheets]
    chosen = next((s for s in sheets if sheet is None or s.name == sheet), None)
    if chosen is None:
        raise ValidationFailed(
            f"no sheet named {sheet!r}; the workbook has {', '.join(map(repr, names))}",
            field="sheet",
        )
    rows = (convert(r) for r in chosen.head)  # every row up to the portion's end, and one
    header = convert(chosen.header or [])
    return _table_portion(
        header, rows, offset=offset, limit=limit, settings=settings, sheet=chosen.name
    )


# -- pages -------------------------------------------------------------------------------


def _document_portion(
    path: Path,
    info: StreamInfo,
    *,
    offset: int,
    limit: int | None,
    settings: Settings,
    cache: ConversionCache | None,
) -> Portion:
    """Pages of a paged document (PDF pages, PPTX slides) from the cached conversion;
    lines of its markdown for documents without pages (DOCX, HTML, …)."""
    converted, _hit = cached_conversion(path, info, settings, cache)
    offsets = converted.page_offsets
    if not offsets:
        count = _checked_limit(limit, "lines", settings)
        lines = converted.markdown.split("\n")
        return _line_portion(lines, offset, count, settings.MAX_TOTAL_OUTPUT, len(lines))
    count = _checked_limit(limit, "pages", settings)
    ends = [*offsets[1:], len(converted.markdown)]
    pages = [converted.markdown[a:b].strip("\n") for a, b in zip(offsets, ends, strict=True)]
    taken: list[str] = []
    used = 0
    for index in range(offset, min(offset + count, len(pages))):
        page = pages[index]
        if taken and used + len(page) > settings.MAX_TOTAL_OUTPUT:
            return Portion("pages", offset, "\n\n".join(taken), len(taken), index, None, True)
        if len(page) > settings.MAX_TOTAL_OUTPUT:
            page = page[: settings.MAX_TOTAL_OUTPUT] + "\n…[page cut]"
        taken.append(page)
        used += len(page) + 2
    end = offset + len(taken)
    next_offset = end if end < len(pages) else None
    cut = any(p.endswith("…[page cut]") for p in taken)
    return Portion("pages", offset, "\n\n".join(taken), len(taken), next_offset, len(pages), cut)
