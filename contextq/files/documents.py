"""Documents (PDF, DOCX, PPTX, HTML, EPUB, ODT, RTF, MSG) → markdown, cached by content hash.

markitdown does the work for most formats, through one lazily built
`MarkItDown` per process with only the converters we need (no plugins, no
exiftool, no LLM captioning, no transcription, no Document Intelligence) and
only ever `convert_stream`. PDFs go to PDFium first (`contextq.files.pdf`),
markitdown's pdfminer path being the fallback. markitdown has no ODT or RTF
converter, so those two are read here (defusedxml / a small RTF reader).

The markdown is cached through `ctx.cache` under
`sha256(bytes) + markitdown version + CONVERTER_VERSION + options`; the
conversion runs under `cache.lock(key)` so the same bytes are converted at
most once at a time and a waiter reuses the result.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import threading
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from contextq import tokens
from contextq.errors import HostileInput, InvalidInput
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult
from contextq.files.safety import bounded_read, check_archive
from contextq.settings import Settings

# Bump when our conversion output changes (PDF page headings, ODT/RTF readers, ...).
CONVERTER_VERSION = "1"
ZIP_TYPES = frozenset({"docx", "pptx", "epub", "odt"})
_MARKITDOWN_INPUT: dict[str, tuple[str, str]] = {
    "pdf": (".pdf", "application/pdf"),
    "docx": (".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    "pptx": (".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    "html": (".html", "text/html"),
    "epub": (".epub", "application/epub+zip"),
    "msg": (".msg", "application/vnd.ms-outlook"),
}
_NO_TEXT_NOISE = re.compile(r"^## Page \d+\s*$|<!--.*?-->", re.MULTILINE | re.DOTALL)
_SLIDE_MARKER = "<!-- Slide number:"


@dataclass(frozen=True)
class Converted:
    """A conversion as cached: the markdown and what we learned making it."""

    markdown: str
    converter: str
    pages: int | None = None
    tokens: int | None = None  # of `markdown`, counted once and cached with it

    def encode(self) -> str:
        return json.dumps({"v": 1, **asdict(self)}, ensure_ascii=False)

    @classmethod
    def decode(cls, raw: str) -> Converted | None:
        try:
            data = json.loads(raw)
            if data.pop("v", None) != 1:
                return None
            return cls(**data)
        except (ValueError, TypeError):
            return None


Converter = Callable[[bytes, StreamInfo, Settings, Path], Converted]


# --- one markitdown per process -------------------------------------------------------

_built: dict[str, Any] = {}  # "markitdown" → the process's instance
_markitdown_lock = threading.Lock()


@functools.cache
def markitdown_version() -> str:
    from importlib.metadata import version

    return version("markitdown")


def get_markitdown() -> Any:
    """The process's MarkItDown, built on first use (its constructor loads an ONNX model)."""
    if "markitdown" not in _built:
        with _markitdown_lock:
            if "markitdown" not in _built:
                os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
                from markitdown import MarkItDown
                from markitdown.converters import (
                    DocxConverter,
                    EpubConverter,
                    HtmlConverter,
                    OutlookMsgConverter,
                    PdfConverter,
                    PptxConverter,
                )

                from contextq.files import pdf

                md = MarkItDown(enable_builtins=False, enable_plugins=False)
                md.register_converter(HtmlConverter(), priority=10.0)
                specific: tuple[Any, ...] = (
                    DocxConverter,
                    PptxConverter,
                    PdfConverter,
                    OutlookMsgConverter,
                    EpubConverter,
                )
                for converter in specific:
                    md.register_converter(converter())
                pdf.register(md)
                _built["markitdown"] = md
    return _built["markitdown"]


def cache_key(sha256: str, file_type: str) -> str:
    options = {"file_type": file_type, "pdf": "pdfium+pdfminer-fallback"}
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]
    return f"doc.{sha256}.markitdown-{markitdown_version()}.c{CONVERTER_VERSION}.{digest}"


# --- converters ---------------------------------------------------------------------------


def convert_document(data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
    """Bytes → markdown for one document type. Raises InvalidInput/HostileInput."""
    if info.file_type == "pdf":
        return _convert_pdf(data)
    if info.file_type == "odt":
        return Converted(odt_to_markdown(path, settings), "contextq-odt")
    if info.file_type == "rtf":
        return Converted(rtf_to_text(data), "contextq-rtf")
    md = _markitdown_convert(data, info.file_type)
    pages = md.count(_SLIDE_MARKER) if info.file_type == "pptx" else None
    return Converted(md, "markitdown", pages=pages)


def _convert_pdf(data: bytes) -> Converted:
    from contextq.files import pdf

    if not data.lstrip()[:1024].startswith(b"%PDF") and b"%PDF-" not in data[:1024]:
        raise InvalidInput("this file is named .pdf but is not a PDF (no %PDF header)")
    try:
        extracted = pdf.extract_text(data)
    except pdf.PdfPasswordRequired as exc:
        raise InvalidInput(
            "this PDF is encrypted with a password; remove the password (or print it to a "
            "new PDF) and upload it again"
        ) from exc
    except Exception as pdfium_exc:  # PDFium refused it: fall back to pdfminer
        try:
            md = _markitdown_convert(data, "pdf")
        except InvalidInput as exc:
            raise InvalidInput(
                f"this PDF could not be read: it looks truncated or corrupt ({pdfium_exc})"
            ) from exc
        return Converted(md, "markitdown-pdfminer")
    return Converted(extracted.markdown, pdf.CONVERTER_NAME, pages=extracted.pages)


def _markitdown_convert(data: bytes, file_type: str) -> str:
    from markitdown import FileConversionException, UnsupportedFormatException
    from markitdown import StreamInfo as MdStreamInfo

    extension, mimetype = _MARKITDOWN_INPUT[file_type]
    kind = file_type.upper()
    try:
        result = get_markitdown().convert_stream(
            io.BytesIO(data), stream_info=MdStreamInfo(extension=extension, mimetype=mimetype)
        )
    except FileConversionException as exc:
        raise InvalidInput(
            f"could not convert this {kind} file: it looks corrupt, truncated or is not really "
            f"a {kind} ({_first_failure(exc)})"
        ) from exc
    except UnsupportedFormatException as exc:
        raise InvalidInput(
            f"could not convert this {kind} file: no converter recognised it"
        ) from exc
    return str(result.markdown)


def _first_failure(exc: Any) -> str:
    for attempt in getattr(exc, "attempts", None) or []:
        info = getattr(attempt, "exc_info", None)
        if info and info[1] is not None:
            return f"{type(info[1]).__name__}: {str(info[1])[:200]}"
    return "no details"


_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def odt_to_markdown(path: Path, settings: Settings) -> str:
    """Headings and paragraphs of an ODT's content.xml, parsed with defusedxml."""
    import defusedxml
    import defusedxml.ElementTree as DET

    try:
        with zipfile.ZipFile(path) as zf:
            xml = bounded_read(zf, "content.xml", settings.MAX_ARCHIVE_UNCOMPRESSED_BYTES)
    except KeyError as exc:
        raise InvalidInput("this ODT has no content.xml; it is not an OpenDocument text") from exc
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InvalidInput(f"this ODT could not be read: it looks corrupt ({exc})") from exc
    try:
        root = DET.fromstring(xml)
    except defusedxml.DefusedXmlException as exc:
        raise HostileInput(f"this ODT's XML uses forbidden constructs ({exc})") from exc
    except DET.ParseError as exc:
        raise InvalidInput(f"this ODT's content.xml is not valid XML ({exc})") from exc
    heading, paragraph = f"{{{_ODF_TEXT}}}h", f"{{{_ODF_TEXT}}}p"
    blocks: list[str] = []
    for element in root.iter():
        if element.tag not in (heading, paragraph):
            continue
        text = "".join(element.itertext()).strip()
        if not text:
            continue
        if element.tag == heading:
            level = element.get(f"{{{_ODF_TEXT}}}outline-level", "1")
            depth = min(max(int(level) if level.isdigit() else 1, 1), 6)
            text = "#" * depth + " " + text
        blocks.append(text)
    return "\n\n".join(blocks) + "\n"


# RTF: a small reader after the well-known striprtf approach (tokens, a group stack).
_RTF_TOKEN = re.compile(
    rb"\\([a-z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-f]{2})|\\([^a-z])|([{}])|[\r\n]+|(.)",
    re.IGNORECASE | re.DOTALL,
)
# Destinations whose text is not document text (most others are marked with \* anyway).
_RTF_DESTINATIONS = frozenset(
    (
        "aftncn",
        "aftnsep",
        "aftnsepc",
        "annotation",
        "atnauthor",
        "atndate",
        "atnid",
        "author",
        "bkmkend",
        "bkmkstart",
        "blipuid",
        "buptim",
        "category",
        "colorschememapping",
        "colortbl",
        "comment",
        "company",
        "creatim",
        "datafield",
        "datastore",
        "defchp",
        "defpap",
        "doccomm",
        "docvar",
        "falt",
        "fchars",
        "ffname",
        "field",
        "file",
        "filetbl",
        "fldinst",
        "fontemb",
        "fontfile",
        "fonttbl",
        "footer",
        "footerf",
        "footerl",
        "footerr",
        "footnote",
        "ftncn",
        "ftnsep",
        "ftnsepc",
        "generator",
        "header",
        "headerf",
        "headerl",
        "headerr",
        "info",
        "keywords",
        "latentstyles",
        "levelnumbers",
        "leveltext",
        "list",
        "listlevel",
        "listname",
        "listoverridetable",
        "listpicture",
        "listtable",
        "listtext",
        "manager",
        "nonesttables",
        "objdata",
        "object",
        "objclass",
        "operator",
        "panose",
        "password",
        "pict",
        "pntext",
        "pntxta",
        "pntxtb",
        "printim",
        "private",
        "revtbl",
        "revtim",
        "rsidtbl",
        "shp",
        "shpinst",
        "shppict",
        "stylesheet",
        "subject",
        "template",
        "themedata",
        "title",
        "userprops",
        "wgrffmtfilter",
        "writereservation",
        "xmlnstbl",
    )
)
_RTF_SPECIALS = {
    "par": "\n",
    "sect": "\n\n",
    "page": "\n\n",
    "line": "\n",
    "tab": "\t",
    "row": "\n",
    "cell": " | ",
    "nestcell": " | ",
    "emdash": "\u2014",
    "endash": "\u2013",
    "emspace": "\u2003",
    "enspace": "\u2002",
    "qmspace": "\u2005",
    "bullet": "\u2022",
    "lquote": "\u2018",
    "rquote": "\u2019",
    "ldblquote": "\u201c",
    "rdblquote": "\u201d",
}


class _RtfReader:
    """State of one RTF pass: the group stack, `\\uc` skipping and the text so far."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, bool]] = []
        self.ignorable = False
        self.uc_skip = 1
        self.cur_skip = 0
        self.out: list[str] = []

    def brace(self, brace: bytes) -> None:
        self.cur_skip = 0
        if brace == b"{":
            self.stack.append((self.uc_skip, self.ignorable))
        elif self.stack:
            self.uc_skip, self.ignorable = self.stack.pop()

    def symbol(self, char: bytes) -> None:
        self.cur_skip = 0
        if char == b"*":
            self.ignorable = True
        elif not self.ignorable and char == b"~":
            self.out.append("\xa0")
        elif not self.ignorable and char in b"{}\\":
            self.out.append(char.decode("latin-1"))

    def control(self, word: bytes, arg: bytes | None) -> None:
        self.cur_skip = 0
        name = word.decode("ascii")
        if name in _RTF_DESTINATIONS:
            self.ignorable = True
        elif self.ignorable:
            return
        elif name in _RTF_SPECIALS:
            self.out.append(_RTF_SPECIALS[name])
        elif name == "uc" and arg is not None:
            self.uc_skip = max(0, min(int(arg), 8))
        elif name == "u" and arg is not None:
            code = int(arg)
            code = code + 0x10000 if code < 0 else code
            self.out.append(chr(code) if 0 <= code <= 0xFFFF else "\ufffd")
            self.cur_skip = self.uc_skip

    def char(self, text: str) -> None:
        if self.cur_skip > 0:
            self.cur_skip -= 1
        elif not self.ignorable:
            self.out.append(text)


def rtf_to_text(data: bytes) -> str:
    """Plain text of an RTF document (formatting, fonts, pictures and metadata dropped)."""
    if not data.lstrip().startswith(b"{\\rtf"):
        raise InvalidInput("this file is named .rtf but is not RTF (it does not start with {\\rtf)")
    reader = _RtfReader()
    for match in _RTF_TOKEN.finditer(data):
        word, arg, hexcode, char, brace, tchar = match.groups()
        if brace:
            reader.brace(brace)
        elif char:
            reader.symbol(char)
        elif word:
            reader.control(word, arg)
        elif hexcode:
            reader.char(bytes([int(hexcode, 16)]).decode("cp1252", errors="replace"))
        elif tchar:
            reader.char(tchar.decode("latin-1"))
    text = "".join(reader.out).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


# --- the processor ----------------------------------------------------------------------


class DocumentProcessor:
    name = "document"

    def __init__(self, convert: Converter = convert_document) -> None:
        self._convert = convert

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "document"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        if info.file_type in ZIP_TYPES:
            check_archive(path, ctx.settings, what=f"{info.file_type.upper()} file")
        data = path.read_bytes()
        if not data:
            raise InvalidInput(f"the {info.file_type.upper()} file is empty (0 bytes)")
        sha = hashlib.sha256(data).hexdigest()
        converted, hit = self._cached_convert(data, sha, path, info, ctx)
        return self._result(converted, hit, info)

    def _cached_convert(
        self, data: bytes, sha: str, path: Path, info: StreamInfo, ctx: ProcessContext
    ) -> tuple[Converted, bool]:
        cache = ctx.cache
        if cache is None:
            return self._convert_counted(data, path, info, ctx), False
        key = cache_key(sha, info.file_type)
        found = _cached(cache.get(key))
        if found is not None:
            return found, True
        with cache.lock(key):
            found = _cached(cache.get(key))
            if found is not None:
                return found, True
            converted = self._convert_counted(data, path, info, ctx)
            cache.put(key, converted.encode())
            return converted, False

    def _convert_counted(
        self, data: bytes, path: Path, info: StreamInfo, ctx: ProcessContext
    ) -> Converted:
        converted = self._convert(data, info, ctx.settings, path)
        if converted.tokens is None:
            converted = Converted(
                converted.markdown,
                converted.converter,
                converted.pages,
                tokens.count_tokens(converted.markdown),
            )
        return converted

    def _result(self, converted: Converted, hit: bool, info: StreamInfo) -> FileExtractionResult:
        markdown = converted.markdown
        metadata: dict[str, Any] = {
            "converter": converted.converter,
            "markitdown_version": markitdown_version(),
            "chars": len(markdown),
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
            metadata=metadata,
            cache_hit=hit,
            full_text_tokens=full_tokens,
        )


def _cached(raw: str | None) -> Converted | None:
    return Converted.decode(raw) if raw is not None else None
