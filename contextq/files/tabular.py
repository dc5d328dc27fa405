"""Tables: CSV/TSV, XLSX/XLSM, XLS, ODS → one markdown table per sheet.

Each sheet shows its header, the first DEFAULT_ROWS_HEAD and the last
DEFAULT_ROWS_TAIL data rows (the tail kept in a bounded deque), at most
MAX_COLUMNS columns and MAX_CELL_LENGTH characters per cell, and a line
with its exact totals. The readers: `csv_read` (with the byte scan of `csv_scan`)
and `workbooks`; the sampling model: `table_sheet`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextq import tokens
from contextq.errors import InvalidInput
from contextq.files.csv_read import read_csv
from contextq.files.markdown import escape_cell
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.files.table_sheet import Sheet
from contextq.files.text import file_tokens, read_sample, sniff_encoding
from contextq.files.workbooks import read_ods, read_xls, read_xlsx
from contextq.settings import Settings

# ---------------------------------------------------------------- rendering


def _md(cell: str, limit: int, trunc: TruncationInfo) -> str:
    if len(cell) > limit:
        trunc.count("cells truncated")
        cell = cell[:limit] + "…"
    return escape_cell(cell)


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
    """`token_count` of a table is the tokens of its whole text, as docs/api.md#the-file-object
    says.

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
