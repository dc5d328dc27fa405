"""Large tool results as workspace files (docs/workspaces.md#large-tool-results).

A tool message over TOOL_RESULT_OFFLOAD_TOKENS is also written to
`/workspace/tool-results/<message_id>.<ext>`, the extension chosen from what the text
is, so the file processors make the preview of its format (head and tail rows of a CSV,
depth-limited JSON, the head of text): `.json` for a JSON document, `.jsonl` for JSON
lines, `.csv` / `.tsv` for a table the CSV sniffer reads with a steady column count,
`.xml` / `.html` for markup the file detector recognises, `.txt` otherwise.
"""

from __future__ import annotations

import csv
import json

from contextq.files.csv_read import sniff_dialect
from contextq.workspace.paths import check_id

TOOL_RESULTS_DIR = "tool-results"
SNIFF_CHARS = 64 * 1024
TABLE_SAMPLE_LINES = 50


def tool_result_path(message_id: str, extension: str) -> str:
    """The workspace path (relative) of a tool message's full result."""
    return f"{TOOL_RESULTS_DIR}/{check_id(message_id, 'message id')}.{extension}"


def tool_result_extension(text: str) -> str:
    """`json`, `jsonl`, `csv`, `tsv`, `xml`, `html` or `txt`: what `text` is."""
    stripped = text.strip()
    if not stripped:
        return "txt"
    if stripped[0] in "[{" and _is_json(stripped):
        return "json"
    if stripped[0] == "{" and _is_json_lines(stripped):
        return "jsonl"
    if stripped[0] == "<":
        head = stripped[:512].lower()
        if head.startswith(("<!doctype html", "<html")):
            return "html"
        if head.startswith("<?xml"):
            return "xml"
    return _table_kind(stripped) or "txt"


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _is_json_lines(text: str) -> bool:
    lines = [line for line in text[:SNIFF_CHARS].splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    complete = lines if len(text) <= SNIFF_CHARS else lines[:-1]  # the last may be cut
    return all(_is_json(line) and line.lstrip()[0] == "{" for line in complete)


def _table_kind(text: str) -> str | None:
    """`csv` or `tsv` when the first lines parse as a table of at least two columns with
    the same width on every row (the CSV sniffer's dialect, comma or tab only)."""
    sample = text[:SNIFF_CHARS]
    lines = sample.splitlines()
    if len(lines) < 3:
        return None
    dialect = sniff_dialect(sample, "csv")
    if dialect.delimiter not in (",", "\t"):
        return None
    rows = list(csv.reader(lines[:TABLE_SAMPLE_LINES], dialect))
    widths = {len(row) for row in rows if row}
    if len(widths) != 1 or widths.pop() < 2:
        return None
    return "tsv" if dialect.delimiter == "\t" else "csv"
