"""PDF → markdown: PDFium for the text, pdfplumber for the pages that hold tables.

PDFium (pypdfium2) reads a page's text in about a millisecond; markitdown's own
path (pdfplumber + pdfminer, pure Python) takes over 100 times longer. But PDFium
joins a table's cells with spaces, so blank cells shift the columns. Each page is
therefore looked at cheaply first (`_looks_tabular`: its ruling lines and cell
rectangles, from PDFium's object list); only such pages are opened with pdfplumber,
whose table finder gives the cells, rendered as markdown pipe tables. The text above,
between, beside and below the tables still comes from PDFium (`get_text_bounded`).

PDFium marks a soft hyphen (a word broken at a line end) with U+FFFE or U+0002: the
two halves are joined here. PDFium is not thread-safe: every call holds `_PDFIUM_LOCK`.
"""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass
from typing import Any

from contextq.files.markdown import markdown_table

_PDFIUM_LOCK = threading.RLock()
# a soft hyphen where PDFium broke a word across lines: join the halves (and the line)
_SOFT_HYPHEN = re.compile(r"[\ufffe\x02\u00ad](?:\r?\n)?")
_LINE_ENDS = re.compile(r"\r\n?")
_EDGE_PT = 2.0  # a path thinner than this is a ruling line
_MIN_RULE_PT = 8.0


class PdfPasswordRequired(Exception):
    """The PDF is encrypted with a user password."""


class PdfUnreadable(Exception):
    """PDFium could not open the file as a PDF."""


@dataclass(frozen=True)
class PdfText:
    pages: list[str]  # the markdown of each page, in order
    table_pages: int = 0  # pages rendered with their tables as markdown tables


def page_markdown(pages: list[str]) -> tuple[str, list[int]]:
    """The document's markdown (a `## Page N` heading per page) and each page's start offset."""
    parts: list[str] = []
    offsets: list[int] = []
    at = 0
    for number, text in enumerate(pages, 1):
        heading = f"## Page {number}"
        part = f"{heading}\n\n{text}" if text else heading
        offsets.append(at)
        parts.append(part)
        at += len(part) + 2
    return "\n\n".join(parts) + "\n", offsets


def _open(data: bytes) -> Any:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise PdfPasswordRequired(str(exc)) from exc
        raise PdfUnreadable(str(exc)) from exc


def tidy(text: str) -> str:
    """PDFium's page text: line ends normalised, soft-hyphenated words joined."""
    return _SOFT_HYPHEN.sub("", _LINE_ENDS.sub("\n", text)).strip()


def extract_text(data: bytes, *, tables: bool = True) -> PdfText:
    """Every page's text via PDFium; with `tables`, table pages get markdown tables."""
    pages: list[str] = []
    table_pages = 0
    finder = _TableFinder(data) if tables else None
    with _PDFIUM_LOCK:
        doc = _open(data)
        try:
            for index in range(len(doc)):
                page = doc[index]
                try:
                    text = None
                    if finder is not None and _looks_tabular(page):
                        text = finder.page_with_tables(index, page)
                        table_pages += text is not None
                    pages.append(text if text is not None else _page_text(page))
                finally:
                    page.close()
        finally:
            doc.close()
            if finder is not None:
                finder.close()
    return PdfText(pages=pages, table_pages=table_pages)


def _page_text(page: Any) -> str:
    textpage = page.get_textpage()
    try:
        return tidy(textpage.get_text_range())
    finally:
        textpage.close()


def _looks_tabular(page: Any) -> bool:
    """Cheap: does the page draw a grid (cell rectangles, or crossing ruling lines)?"""
    import pypdfium2.raw as pdfium_c

    rects = horizontal = vertical = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        left, bottom, right, top = obj.get_bounds()
        width, height = right - left, top - bottom
        if width <= _EDGE_PT and height >= _MIN_RULE_PT:
            vertical += 1
        elif height <= _EDGE_PT and width >= _MIN_RULE_PT:
            horizontal += 1
        elif width > _EDGE_PT and height > _EDGE_PT:
            rects += 1
        if rects >= 2 or (horizontal >= 2 and vertical >= 2):
            return True
    return False


class _TableFinder:
    """pdfplumber over the same bytes, opened on the first page that looks tabular."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pdf: Any = None

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()

    def page_with_tables(self, index: int, page: Any) -> str | None:
        """The page as text and pipe tables in reading order, or None (no real table)."""
        if page.get_rotation() % 360:
            return None  # rotated page: coordinates differ; PDFium's plain text
        try:
            found = self._tables(index)
        except Exception:  # pdfplumber failed on this page: PDFium's text is still right
            return None
        if not found:
            return None
        return _layout(page, found)

    def _tables(self, index: int) -> list[tuple[tuple[float, float, float, float], str]]:
        import pdfplumber

        if self._pdf is None:
            self._pdf = pdfplumber.open(io.BytesIO(self._data))
        plumber_page = self._pdf.pages[index]
        try:
            tables = []
            for table in plumber_page.find_tables():
                rows = [[_cell(c) for c in row] for row in table.extract()]
                if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
                    tables.append((tuple(table.bbox), markdown_table(rows)))
            return sorted(tables, key=lambda t: t[0][1])
        finally:
            plumber_page.close()


def _cell(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _layout(page: Any, tables: list[tuple[tuple[float, float, float, float], str]]) -> str:
    """PDFium's text around the tables (pdfplumber's boxes: x0, top, x1, bottom from the
    top-left corner) with each table in its place."""
    left, bottom, right, top = page.get_bbox()  # the inherited box too, as pdfplumber reads it
    textpage = page.get_textpage()

    def text_in(x0: float, y_top: float, x1: float, y_bottom: float) -> str:
        if x1 - x0 <= 0 or y_bottom - y_top <= 0:
            return ""
        raw = textpage.get_text_bounded(left + x0, top - y_bottom, left + x1, top - y_top)
        return tidy(raw)

    try:
        width = right - left
        parts: list[str] = []
        cursor = 0.0
        for (x0, t_top, x1, t_bottom), table in tables:
            parts.append(text_in(0, cursor, width, t_top))
            parts.append(text_in(0, t_top, x0, t_bottom))
            parts.append(table)
            parts.append(text_in(x1, t_top, width, t_bottom))
            cursor = max(cursor, t_bottom)
        parts.append(text_in(0, cursor, width, top - bottom))
    finally:
        textpage.close()
    return "\n\n".join(p for p in parts if p)


def pdfminer_pages(data: bytes) -> list[str]:
    """The fallback for PDFs PDFium cannot open: pdfminer's text, split at its page breaks."""
    from pdfminer.high_level import extract_text as pdfminer_text

    text = pdfminer_text(io.BytesIO(data))
    pages = text.split("\x0c")
    if pages and not pages[-1].strip():
        pages.pop()
    return [tidy(page) for page in pages]
