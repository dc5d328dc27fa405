"""Documents (PDF, DOCX, PPTX, HTML, EPUB, ODT, RTF, MSG, IPYNB) → markdown, cached by content.

One converter per document type (`CONVERTERS`): PDFium with pdfplumber tables for PDF
(`pdf`), the content of a web page for HTML (`webpage`: an article's main content,
every item of a results page, a thread or a listing, saying what was left out), our
own readers for ODT, RTF and notebooks (`odt`, `rtf`, `notebook`), markitdown for DOCX
(plus its comments), PPTX, EPUB and MSG (`mdconvert`).

The conversion is cached through `ctx.cache` under `sha256(bytes) + markitdown version
+ CONVERTER_VERSION + options`, with the page (slide) boundaries, so the whole text can
be indexed later without converting again (`fulltext`); it runs under `cache.lock(key)`
so the same bytes are converted at most once at a time and a waiter reuses the result.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from contextq import tokens
from contextq.errors import InvalidInput
from contextq.files import docx_comments, mdconvert, pdf
from contextq.files.notebook import notebook_to_markdown
from contextq.files.odt import odt_to_markdown
from contextq.files.registry import ConversionCache, ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.files.rtf import rtf_to_text
from contextq.files.safety import check_archive
from contextq.files.webpage import convert_webpage
from contextq.settings import Settings

# Bump when our conversion output changes (PDF tables, page offsets, HTML main content, ...).
CONVERTER_VERSION = "3"
# a converter that leaves text out says how much in its details under this key (a
# TruncationInfo's shown/total/counts); it becomes the file's truncation, not metadata
LEFT_OUT = "truncation"
ZIP_TYPES = frozenset({"docx", "pptx", "epub", "odt"})
_NO_TEXT_NOISE = re.compile(r"^## Page \d+\s*$|<!--.*?-->", re.MULTILINE | re.DOTALL)
_SLIDE_MARKER = re.compile(r"^<!-- Slide number: *\d+ *-->", re.MULTILINE)


@dataclass(frozen=True)
class Converted:
    """A conversion as cached: the markdown and what we learned making it."""

    markdown: str
    converter: str
    pages: int | None = None
    tokens: int | None = None  # of `markdown`, counted once and cached with it
    page_offsets: list[int] | None = None  # where each page (slide) starts in `markdown`
    details: dict[str, Any] = field(default_factory=dict)  # shown in the file's metadata

    def encode(self) -> str:
        return json.dumps({"v": 2, **asdict(self)}, ensure_ascii=False)

    @classmethod
    def decode(cls, raw: str) -> Converted | None:
        try:
            data = json.loads(raw)
            if data.pop("v", None) != 2:
                return None
            return cls(**data)
        except (ValueError, TypeError):
            return None


Converter = Callable[[bytes, StreamInfo, Settings, Path], Converted]


def cache_key(sha256: str, file_type: str) -> str:
    options = {"file_type": file_type, "pdf": "pdfium+pdfplumber-tables"}
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]
    version = mdconvert.markitdown_version()
    return f"doc.{sha256}.markitdown-{version}.c{CONVERTER_VERSION}.{digest}"


# --- converters ---------------------------------------------------------------------------


def _convert_pdf(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    if b"%PDF-" not in data[:1024]:
        raise InvalidInput("this file is named .pdf but is not a PDF (no %PDF header)")
    try:
        extracted = pdf.extract_text(data)
        converter = "pdfium"
    except pdf.PdfPasswordRequired as exc:
        raise InvalidInput(
            "this PDF is encrypted with a password; remove the password (or print it to a "
            "new PDF) and upload it again"
        ) from exc
    except Exception as pdfium_exc:  # PDFium refused it: pdfminer may still read it
        try:
            extracted = pdf.PdfText(pages=pdf.pdfminer_pages(data))
        except Exception as exc:
            raise InvalidInput(
                f"this PDF could not be read: it looks truncated or corrupt ({pdfium_exc})"
            ) from exc
        converter = "pdfminer"
    markdown, offsets = pdf.page_markdown(extracted.pages)
    details = {"table_pages": extracted.table_pages} if extracted.table_pages else {}
    return Converted(markdown, converter, len(extracted.pages), None, offsets, details)


def _convert_pptx(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    markdown = mdconvert.convert(data, "pptx")
    offsets = [m.start() for m in _SLIDE_MARKER.finditer(markdown)]
    if offsets:
        offsets[0] = 0  # anything before the first slide marker belongs to slide 1
    return Converted(markdown, "markitdown", len(offsets), None, offsets or None)


def _convert_docx(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    markdown = mdconvert.convert(data, "docx")
    comments = docx_comments.read_comments(path, settings)
    if comments:
        markdown = markdown.rstrip() + "\n\n" + docx_comments.comments_markdown(comments)
    return Converted(markdown, "markitdown", details={"comments": len(comments)})


def _convert_html(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    page = convert_webpage(data)
    details: dict[str, Any] = {
        "extraction": page.extraction,
        "page_kind": page.kind,
        "page_chars": page.page_chars,
    }
    if page.left_out:
        details["left_out"] = page.left_out
    if page.title:
        details["title"] = page.title
    if page.url:
        details["url"] = page.url
    if page.links_unwrapped or page.links_dropped:
        details["tracking_links"] = {
            "unwrapped": page.links_unwrapped,
            "dropped": page.links_dropped,
        }
    if page.truncation():
        details[LEFT_OUT] = page.truncation()
    converter = "trafilatura" if page.extraction == "main content" else "markdownify"
    return Converted(page.markdown, converter, details=details)


def _convert_with_markitdown(
    data: bytes, info: StreamInfo, settings: Settings, path: Path
) -> Converted:
    return Converted(mdconvert.convert(data, info.file_type), "markitdown")


def _convert_odt(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    return Converted(odt_to_markdown(path, settings), "contextq-odt")


def _convert_rtf(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    return Converted(rtf_to_text(data), "contextq-rtf")


def _convert_ipynb(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    return Converted(notebook_to_markdown(path, settings), "contextq-ipynb")


# Every `document` file type of the format table has its converter here (a test checks).
CONVERTERS: dict[str, Converter] = {
    "pdf": _convert_pdf,
    "docx": _convert_docx,
    "pptx": _convert_pptx,
    "html": _convert_html,
    "epub": _convert_with_markitdown,
    "msg": _convert_with_markitdown,
    "odt": _convert_odt,
    "rtf": _convert_rtf,
    "ipynb": _convert_ipynb,
}


def convert_document(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    """Bytes → markdown for one document type. Raises InvalidInput/HostileInput."""
    converter = CONVERTERS.get(info.file_type)
    if converter is None:  # a gap in contextq, not a fault of the file
        raise InvalidInput(f"contextq has no converter for {info.file_type} documents yet")
    return converter(data, info, settings, path)


def cached_conversion(
    path: Path,
    info: StreamInfo,
    settings: Settings,
    cache: ConversionCache | None,
    convert: Converter = convert_document,
) -> tuple[Converted, bool]:
    """The file's conversion, from the cache when it is there: (converted, cache hit)."""
    if info.file_type in ZIP_TYPES:
        check_archive(path, settings, what=f"{info.file_type.upper()} file")
    data = path.read_bytes()
    if not data:
        raise InvalidInput(f"the {info.file_type.upper()} file is empty (0 bytes)")
    if cache is None:
        return _convert_counted(convert, data, path, info, settings), False
    key = cache_key(hashlib.sha256(data).hexdigest(), info.file_type)
    found = _cached(cache.get(key))
    if found is not None:
        return found, True
    with cache.lock(key):
        found = _cached(cache.get(key))
        if found is not None:
            return found, True
        converted = _convert_counted(convert, data, path, info, settings)
        cache.put(key, converted.encode())
        return converted, False


def _convert_counted(
    convert: Converter, data: bytes, path: Path, info: StreamInfo, settings: Settings
) -> Converted:
    converted = convert(data, info, settings, path)
    if converted.tokens is None:
        converted = replace(converted, tokens=tokens.count_tokens(converted.markdown))
    return converted


def _cached(raw: str | None) -> Converted | None:
    return Converted.decode(raw) if raw is not None else None


# --- the processor ----------------------------------------------------------------------


class DocumentProcessor:
    name = "document"

    def __init__(self, convert: Converter = convert_document) -> None:
        self._convert = convert

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "document" and info.file_type != "zip"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        converted, hit = cached_conversion(path, info, ctx.settings, ctx.cache, self._convert)
        return _result(converted, hit, info)


def _result(converted: Converted, hit: bool, info: StreamInfo) -> FileExtractionResult:
    markdown = converted.markdown
    details = dict(converted.details)
    left_out = details.pop(LEFT_OUT, None)
    metadata: dict[str, Any] = {
        "converter": converted.converter,
        "markitdown_version": mdconvert.markitdown_version(),
        "chars": len(markdown),
        **details,
    }
    if converted.pages is not None:
        metadata["pages"] = converted.pages  # PDF pages, PPTX slides
        if info.file_type == "pptx":
            metadata["slides"] = converted.pages
    full_tokens = converted.tokens
    if not _NO_TEXT_NOISE.sub("", markdown).strip():
        pages = f" ({converted.pages} pages)" if converted.pages else ""
        markdown = (
            f"[no extractable text: this {info.file_type.upper()}{pages} has no text layer; "
            "it may be scanned images or empty. OCR is not performed.]\n"
        )
        metadata["warning"] = "no extractable text (scanned or empty); OCR is not performed"
        full_tokens = tokens.count_tokens(markdown)
    return FileExtractionResult(
        success=True,
        file_type=info.file_type,
        category="document",
        media_type=info.media_type,
        content=markdown,
        truncation=TruncationInfo(**left_out) if left_out else TruncationInfo(),
        metadata=metadata,
        cache_hit=hit,
        full_text_tokens=full_tokens,
        full_text=converted,
    )
