"""PDF → markdown: PDFium for the text, with ruled tables as markdown pipe tables.

PDFium (pypdfium2) reads a page's text in about a millisecond; markitdown's own
path (pdfplumber + pdfminer, pure Python) takes over 100 times longer. But PDFium
joins a table's cells with spaces, so blank cells shift the columns. So a page that
draws ruling lines is searched for tables (`pdf_tables`: PDFium's path segments as
edges, pdfplumber's table finder for the cells, PDFium's text in each cell), and the
tables are rendered as pipe tables in their place, the text above, beside and below
them still PDFium's (`get_text_bounded`).

PDFium marks a soft hyphen (a word broken at a line end) with U+FFFE or U+0002: the
two halves are joined here. PDFium is not thread-safe: every call holds `_PDFIUM_LOCK`.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from typing import Any

from contextq.files import pdf_tables
from contextq.files.markdown import markdown_table
from contextq.files.pdf_tables import tidy

_PDFIUM_LOCK = threading.RLock()
# a soft hyphen where PDFium broke a word across lines: join the halves (and the line)


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
    import pypdfium2 as pdfium  # noqa: PLC0415 - PDFium, for PDFs only
    import pypdfium2.raw as pdfium_c  # noqa: PLC0415

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise PdfPasswordRequired(str(exc)) from exc
        raise PdfUnreadable(str(exc)) from exc


def extract_text(data: bytes, *, tables: bool = True) -> PdfText:
    """Every page's text via PDFium; with `tables`, ruled tables become markdown tables."""
    pages: list[str] = []
    table_pages = 0
    with _PDFIUM_LOCK:
        doc = _open(data)
        try:
            for index in range(len(doc)):
                page = doc[index]
                try:
                    text = _page_with_tables(page) if tables else None
                    table_pages += text is not None
                    pages.append(text if text is not None else _page_text(page))
                finally:
                    page.close()
        finally:
            doc.close()
    return PdfText(pages=pages, table_pages=table_pages)


def _page_text(page: Any) -> str:
    textpage = page.get_textpage()
    try:
        return tidy(textpage.get_text_range())
    finally:
        textpage.close()


def _page_with_tables(page: Any) -> str | None:
    """The page as text and pipe tables in reading order, or None (no table on it)."""
    if page.get_rotation() % 360 or pdf_tables.path_count(page) < 2:
        return None  # no ruling to find a table by (or a rotated page: plain text)
    textpage = page.get_textpage()
    try:
        found = pdf_tables.find_tables(page, textpage)
        return _layout(page, textpage, found) if found else None
    finally:
        textpage.close()


def _layout(page: Any, textpage: Any, tables: list[Any]) -> str:
    """PDFium's text around the tables (boxes: x0, top, x1, bottom from the top-left
    corner), each table in its place: above, left of, the table, right of, below."""
    left, bottom, right, top = page.get_bbox()  # the inherited box too

    def text_in(x0: float, y_top: float, x1: float, y_bottom: float) -> str:
        if x1 - x0 <= 0 or y_bottom - y_top <= 0:
            return ""
        return tidy(textpage.get_text_bounded(left + x0, top - y_bottom, left + x1, top - y_top))

    width = right - left
    parts: list[str] = []
    cursor = 0.0
    for table in tables:
        x0, t_top, x1, t_bottom = table.bbox
        parts.append(text_in(0, cursor, width, t_top))
        parts.append(text_in(0, t_top, x0, t_bottom))
        parts.append(markdown_table(table.rows))
        parts.append(text_in(x1, t_top, width, t_bottom))
        cursor = max(cursor, t_bottom)
    parts.append(text_in(0, cursor, width, top - bottom))
    return "\n\n".join(p for p in parts if p)


def pdfminer_pages(data: bytes) -> list[str]:
    """The fallback for PDFs PDFium cannot open: pdfminer's text, split at its page breaks."""
    from pdfminer.high_level import extract_text as pdfminer_text  # noqa: PLC0415 - the fallback only

    text = pdfminer_text(io.BytesIO(data))
    pages = text.split("\x0c")
    if pages and not pages[-1].strip():
        pages.pop()
    return [tidy(page) for page in pages]
