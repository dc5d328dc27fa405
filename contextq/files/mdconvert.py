"""markitdown, one instance per process, with only the converters we need.

No plugins, no exiftool, no LLM captioning, no transcription, no Document
Intelligence, and only ever `convert_stream` (never a path or a URL). PDF, ODT,
RTF, notebooks and feeds are read elsewhere (`contextq.files.pdf`, `odt`, `rtf`,
`notebook`, `feeds`); HTML goes through `html` first (main content), markitdown's
HTML converter being its whole-page fallback.
"""

from __future__ import annotations

import functools
import io
import os
import threading
from importlib.metadata import version
from typing import Any

from contextq.errors import InvalidInput

_INPUT: dict[str, tuple[str, str]] = {
    "docx": (".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    "pptx": (".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    "html": (".html", "text/html"),
    "epub": (".epub", "application/epub+zip"),
    "msg": (".msg", "application/vnd.ms-outlook"),
}

_built: dict[str, Any] = {}  # "markitdown" → the process's instance
_lock = threading.Lock()


@functools.cache
def markitdown_version() -> str:
    return version("markitdown")


def get_markitdown() -> Any:
    """The process's MarkItDown, built on first use (its constructor loads an ONNX model)."""
    if "markitdown" not in _built:
        with _lock:
            if "markitdown" not in _built:
                _built["markitdown"] = _build()
    return _built["markitdown"]


def _build() -> Any:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    from markitdown import MarkItDown  # noqa: PLC0415 - after the line above
    from markitdown.converters import (  # noqa: PLC0415
        DocxConverter,
        EpubConverter,
        HtmlConverter,
        OutlookMsgConverter,
        PptxConverter,
    )

    md = MarkItDown(enable_builtins=False, enable_plugins=False)
    md.register_converter(HtmlConverter(), priority=10.0)
    for converter in (DocxConverter, PptxConverter, OutlookMsgConverter, EpubConverter):
        md.register_converter(converter())
    return md


def convert(data: bytes, file_type: str) -> str:
    """Markdown of `data` read as `file_type` (docx, pptx, html, epub, msg). Raises InvalidInput."""
    from markitdown import FileConversionException, UnsupportedFormatException  # noqa: PLC0415 - markitdown
    from markitdown import StreamInfo as MdStreamInfo  # noqa: PLC0415

    extension, mimetype = _INPUT[file_type]
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
