"""Small markdown writers shared by the processors (pipe tables)."""

from __future__ import annotations

import re

_CELL_ESCAPE = re.compile(r"[|\r\n\\]")


def escape_cell(text: str) -> str:
    """A table cell's text on one line, with `|` and `\\` escaped."""
    return _CELL_ESCAPE.sub(lambda m: {"|": r"\|", "\\": "\\\\"}.get(m.group(), " "), text)


def markdown_table(rows: list[list[str]]) -> str:
    """A pipe table: the first row is the header; short rows are padded."""
    width = max(len(row) for row in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [escape_cell(c) for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)
