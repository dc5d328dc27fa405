"""Fast PDF text extraction with pypdfium2, registered inside markitdown ahead of pdfminer.

markitdown's own PDF path (pdfplumber + pdfminer) is pure Python and slow
(~20 s for 50 pages here); PDFium does the same text in a fraction of a
second. `PdfiumConverter` is registered with a lower priority value than
markitdown's converters, so markitdown tries it first and falls back to
pdfminer when PDFium cannot open or read a file. PDFium is not thread-safe:
every call goes through `_PDFIUM_LOCK`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO

# markitdown loads magika → onnxruntime, which reports telemetry unless told not to.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from markitdown import DocumentConverter, DocumentConverterResult, StreamInfo

CONVERTER_NAME = "pdfium"
# markitdown tries lower priority values first; its built-ins use 0 and 10.
PDFIUM_PRIORITY = -1.0

_PDFIUM_LOCK = threading.RLock()
_PDF_MIME_TYPES = ("application/pdf", "application/x-pdf")


class PdfPasswordRequired(Exception):
    """The PDF is encrypted with a user password."""


class PdfUnreadable(Exception):
    """PDFium could not open the file as a PDF."""


@dataclass(frozen=True)
class PdfText:
    markdown: str  # one `## Page N` section per page
    pages: int
    pages_with_text: int


def _open(data: bytes) -> Any:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise PdfPasswordRequired(str(exc)) from exc
        raise PdfUnreadable(str(exc)) from exc


def count_pages(data: bytes) -> int:
    """Open the PDF and count its pages; raises PdfPasswordRequired / PdfUnreadable."""
    with _PDFIUM_LOCK:
        doc = _open(data)
        try:
            return len(doc)
        finally:
            doc.close()


def extract_text(data: bytes) -> PdfText:
    """Text of every page, page-separated, via PDFium."""
    sections: list[str] = []
    with_text = 0
    with _PDFIUM_LOCK:
        doc = _open(data)
        try:
            n_pages = len(doc)
            for index in range(n_pages):
                page = doc[index]
                try:
                    textpage = page.get_textpage()
                    try:
                        text = textpage.get_text_range()
                    finally:
                        textpage.close()
                finally:
                    page.close()
                text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
                if text:
                    with_text += 1
                heading = f"## Page {index + 1}"
                sections.append(f"{heading}\n\n{text}" if text else heading)
        finally:
            doc.close()
    return PdfText(markdown="\n\n".join(sections) + "\n", pages=n_pages, pages_with_text=with_text)


class PdfiumResult(DocumentConverterResult):
    """markitdown's result plus what PDFium saw, so the caller can report it."""

    def __init__(self, extracted: PdfText) -> None:
        super().__init__(markdown=extracted.markdown)
        self.converter = CONVERTER_NAME
        self.pages = extracted.pages
        self.pages_with_text = extracted.pages_with_text


class PdfiumConverter(DocumentConverter):
    """A markitdown converter for PDF that uses PDFium; raising lets markitdown fall back."""

    def accepts(self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any) -> bool:
        extension = (stream_info.extension or "").lower()
        mimetype = (stream_info.mimetype or "").lower()
        return extension == ".pdf" or mimetype.startswith(_PDF_MIME_TYPES)

    def convert(
        self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any
    ) -> DocumentConverterResult:
        return PdfiumResult(extract_text(file_stream.read()))


def register(markitdown: Any) -> None:
    """Put the PDFium converter in front of markitdown's pdfminer converter."""
    markitdown.register_converter(PdfiumConverter(), priority=PDFIUM_PRIORITY)
