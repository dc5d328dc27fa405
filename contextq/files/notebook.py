"""Jupyter notebooks (.ipynb, nbformat 4 and 3) → markdown: cells in order, with outputs.

Markdown cells as they are; code cells fenced in the kernel's language; raw cells
fenced; each code cell's outputs after it: stream text, `text/markdown` or
`text/plain` results, errors (name, value, traceback), and a line naming each image
or other rich output that has no text. A long output keeps its first
OUTPUT_MAX_LINES lines and says how many more there were.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contextq.errors import InputTooLarge, InvalidInput
from contextq.settings import Settings

OUTPUT_MAX_LINES = 40
OUTPUT_MAX_CHARS = 4000
_TEXT_PREFERENCE = ("text/markdown", "text/plain")
_V3_OUTPUT = {"pyout": "execute_result", "pyerr": "error"}


def notebook_to_markdown(path: Path, settings: Settings) -> str:
    notebook = _load(path, settings)
    language = _language(notebook)
    blocks = [_cell(cell, language) for cell in _cells(notebook)]
    return "\n\n".join(b for b in blocks if b) + "\n"


def _load(path: Path, settings: Settings) -> dict[str, Any]:
    size = path.stat().st_size
    if size > settings.MAX_JSON_PARSE_BYTES:
        raise InputTooLarge(
            f"this notebook is {size} bytes, over the {settings.MAX_JSON_PARSE_BYTES}-byte "
            "limit for reading it whole (MAX_JSON_PARSE_BYTES); clear its outputs and upload "
            "it again"
        )
    try:
        notebook = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"this notebook is not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise InvalidInput("this notebook's JSON is nested too deeply to read") from exc
    if not isinstance(notebook, dict) or not (
        isinstance(notebook.get("cells"), list) or isinstance(notebook.get("worksheets"), list)
    ):
        raise InvalidInput("this .ipynb file is JSON but not a Jupyter notebook (no `cells` list)")
    return notebook


def _cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(notebook.get("cells"), list):
        cells = notebook["cells"]
    else:  # nbformat 3: cells inside worksheets
        cells = [
            c for ws in notebook["worksheets"] if isinstance(ws, dict) for c in ws.get("cells", [])
        ]
    return [c for c in cells if isinstance(c, dict)]


def _language(notebook: dict[str, Any]) -> str:
    meta = notebook.get("metadata") or {}
    for holder, key in ((meta.get("language_info"), "name"), (meta.get("kernelspec"), "language")):
        if isinstance(holder, dict) and isinstance(holder.get(key), str):
            return str(holder[key])
    return "python"


def _text(value: Any) -> str:
    """nbformat's multiline strings are a string or a list of strings."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return str(value) if value is not None else ""


def _fence(body: str, language: str = "") -> str:
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return f"{ticks}{language}\n{body.rstrip()}\n{ticks}"


def _cell(cell: dict[str, Any], language: str) -> str:
    kind = cell.get("cell_type")
    source = _text(cell.get("source", cell.get("input", ""))).strip()
    if kind == "markdown":
        return source
    if kind == "heading":  # nbformat 3
        level = cell.get("level", 1)
        depth = min(max(level if isinstance(level, int) else 1, 1), 6)
        return "#" * depth + " " + source
    if kind == "raw":
        return _fence(source) if source else ""
    if kind != "code":
        return source
    parts = [_fence(source, str(cell.get("language") or language))] if source else []
    outputs = [_output(o) for o in cell.get("outputs") or [] if isinstance(o, dict)]
    outputs = [o for o in outputs if o]
    if outputs:
        parts.append("Output:\n\n" + "\n\n".join(outputs))
    return "\n\n".join(parts)


def _output(output: dict[str, Any]) -> str:
    kind = _V3_OUTPUT.get(str(output.get("output_type")), output.get("output_type"))
    if kind == "stream":
        return _fence(_cut(_text(output.get("text"))))
    if kind == "error":
        head = f"Error: {output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")
        trace = "\n".join(_text(line) for line in output.get("traceback") or [])
        return head + ("\n\n" + _fence(_cut(trace)) if trace.strip() else "")
    data = output.get("data")
    if not isinstance(data, dict):  # nbformat 3 keeps the types on the output itself
        data = {_V3_MIME.get(k, k): v for k, v in output.items() if k in _V3_MIME}
    for mime in _TEXT_PREFERENCE:
        if mime in data:
            text = _cut(_text(data[mime]))
            return text if mime == "text/markdown" else _fence(text)
    kinds = ", ".join(sorted(str(k) for k in data))
    return f"[output not shown: {kinds}]" if kinds else ""


_V3_MIME = {
    "text": "text/plain",
    "html": "text/html",
    "markdown": "text/markdown",
    "png": "image/png",
    "jpeg": "image/jpeg",
    "svg": "image/svg+xml",
    "latex": "text/latex",
    "json": "application/json",
}


def _cut(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    more_lines = len(lines) - OUTPUT_MAX_LINES
    body = "\n".join(lines[:OUTPUT_MAX_LINES])
    more_chars = len(body) - OUTPUT_MAX_CHARS
    if more_chars > 0:
        body = body[:OUTPUT_MAX_CHARS] + f"… ({more_chars} more chars)"
    if more_lines > 0:
        body += f"\n… ({more_lines} more lines of output)"
    return body
