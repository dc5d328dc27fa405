"""Tables on a PDF page: ruling lines from PDFium, cells by pdfplumber's table finder.

A page is looked at in two cheap steps. First its object list (PDFium, C speed): a
page with fewer than two path objects has no table (`path_count`). Otherwise the
horizontal and vertical segments of its paths (cell borders, rules, rectangles) become
edges, and pdfplumber's `TableFinder` — the same geometry as its "lines" strategy:
snap, join, intersect, cells, tables — finds the tables. pdfplumber never parses the
page itself (that is what costs: every character through pdfminer); each cell's text
comes from PDFium (`get_text_bounded`). Tables of fewer than 2 rows or 2 columns are not tables.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_SOFT_HYPHEN = re.compile(r"[\ufffe\x02\u00ad](?:\r?\n)?")
_LINE_ENDS = re.compile(r"\r\n?")
_AXIS_TOLERANCE = 1.0  # pt: a segment this close to level (or plumb) is a ruling
_MIN_EDGE = 3.0  # pt: shorter segments are ticks, not borders
# a page with more ruling segments than this, or whose merged rulings cross more often,
# is a drawing (a chart, a map, hatching), not a table: the finder's cell search grows
# with the crossings (a 60-row, 20-column grid has about 1 300)
MAX_EDGES = 4000
MAX_CROSSINGS = 5000


def tidy(text: str) -> str:
    """PDFium's page text: line ends normalised, soft-hyphenated words joined (the page's
    text and a table cell's alike)."""
    return _SOFT_HYPHEN.sub("", _LINE_ENDS.sub("\n", text)).strip()


@dataclass(frozen=True)
class PageTable:
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom from the top-left corner
    rows: list[list[str]]


def path_count(page: Any) -> int:
    import pypdfium2.raw as pdfium_c  # noqa: PLC0415 - PDFium, for PDFs only

    raw = page.raw
    count = 0
    for index in range(pdfium_c.FPDFPage_CountObjects(raw)):
        obj = pdfium_c.FPDFPage_GetObject(raw, index)
        count += pdfium_c.FPDFPageObj_GetType(obj) == pdfium_c.FPDF_PAGEOBJ_PATH
    return count


def find_tables(page: Any, textpage: Any) -> list[PageTable]:
    """The page's ruled tables, top to bottom, with their cells' text (possibly [])."""
    from pdfplumber.table import (  # noqa: PLC0415 - pdfplumber, for ruled pages only
        DEFAULT_JOIN_TOLERANCE,
        DEFAULT_SNAP_TOLERANCE,
        TableFinder,
        merge_edges,
    )

    left, bottom, right, top = page.get_bbox()
    edges = list(itertools.islice(_edges(page, left, top), MAX_EDGES + 1))
    if len(edges) > MAX_EDGES:
        return []
    edges = merge_edges(edges, *(DEFAULT_SNAP_TOLERANCE,) * 2, *(DEFAULT_JOIN_TOLERANCE,) * 2)
    horizontal = sum(1 for e in edges if e["orientation"] == "h")
    vertical = len(edges) - horizontal
    if horizontal < 2 or vertical < 2 or horizontal * vertical > MAX_CROSSINGS:
        return []
    page_like: Any = _EdgesOnly(edges, (0.0, 0.0, right - left, top - bottom))
    finder = TableFinder(page_like)
    tables = []
    for table in finder.tables:
        rows = [[_cell_text(textpage, cell, left, top) for cell in row.cells] for row in table.rows]
        if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
            x0, y_top, x1, y_bottom = table.bbox
            tables.append(PageTable((x0, y_top, x1, y_bottom), rows))
    return sorted(tables, key=lambda t: t.bbox[1])


class _EdgesOnly:
    """What TableFinder reads of a pdfplumber page with the "lines" strategies."""

    def __init__(self, edges: list[dict[str, Any]], bbox: tuple[float, ...]) -> None:
        self.edges = edges
        self.bbox = bbox


def _cell_text(textpage: Any, cell: Any, left: float, top: float) -> str:
    if cell is None:  # covered by a spanning cell
        return ""
    x0, y_top, x1, y_bottom = cell
    raw = textpage.get_text_bounded(left + x0, top - y_bottom, left + x1, top - y_top)
    return " ".join(tidy(raw).split())


def _edges(page: Any, left: float, top: float) -> Iterator[dict[str, Any]]:
    """Horizontal and vertical segments of the page's paths, in top-left coordinates."""
    import pypdfium2.raw as pdfium_c  # noqa: PLC0415

    raw = page.raw
    for index in range(pdfium_c.FPDFPage_CountObjects(raw)):
        obj = pdfium_c.FPDFPage_GetObject(raw, index)
        if pdfium_c.FPDFPageObj_GetType(obj) != pdfium_c.FPDF_PAGEOBJ_PATH:
            continue
        for (ax, ay), (bx, by) in _segments(obj):
            edge = _edge(ax - left, top - ay, bx - left, top - by)
            if edge is not None:
                yield edge


def _segments(obj: Any) -> Iterator[tuple[tuple[float, float], tuple[float, float]]]:
    """Straight segments of one path object, in page coordinates (its matrix applied)."""
    import pypdfium2.raw as pdfium_c  # noqa: PLC0415

    matrix = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, ctypes.byref(matrix)):
        return
    x, y = ctypes.c_float(), ctypes.c_float()
    start: tuple[float, float] | None = None
    previous: tuple[float, float] | None = None
    for index in range(pdfium_c.FPDFPath_CountSegments(obj)):
        segment = pdfium_c.FPDFPath_GetPathSegment(obj, index)
        if not pdfium_c.FPDFPathSegment_GetPoint(segment, ctypes.byref(x), ctypes.byref(y)):
            continue
        point = (
            matrix.a * x.value + matrix.c * y.value + matrix.e,
            matrix.b * x.value + matrix.d * y.value + matrix.f,
        )
        kind = pdfium_c.FPDFPathSegment_GetType(segment)
        if kind == pdfium_c.FPDF_SEGMENT_MOVETO:
            start = point
        elif kind == pdfium_c.FPDF_SEGMENT_LINETO and previous is not None:
            yield previous, point
        if pdfium_c.FPDFPathSegment_GetClose(segment) and start is not None:
            yield point, start
        previous = point


def _edge(x0: float, y0: float, x1: float, y1: float) -> dict[str, Any] | None:
    if abs(y0 - y1) <= _AXIS_TOLERANCE and abs(x1 - x0) >= _MIN_EDGE:
        lo, hi = sorted((x0, x1))
        return {
            "x0": lo, "x1": hi, "top": y0, "bottom": y0, "width": hi - lo, "height": 0.0,
            "orientation": "h", "object_type": "line",
        }  # fmt: skip
    if abs(x0 - x1) <= _AXIS_TOLERANCE and abs(y1 - y0) >= _MIN_EDGE:
        lo, hi = sorted((y0, y1))
        return {
            "x0": x0, "x1": x0, "top": lo, "bottom": hi, "width": 0.0, "height": hi - lo,
            "orientation": "v", "object_type": "line",
        }  # fmt: skip
    return None
