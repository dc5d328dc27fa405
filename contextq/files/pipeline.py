"""process_file: detect → processor → final cuts (MAX_TOTAL_OUTPUT, MAX_TOKENS_PER_FILE).

Every failure becomes a `FileExtractionResult` with `success=False` and an
error a person can act on; only the exception types the caller passes in
`reraise` (e.g. Celery's SoftTimeLimitExceeded) escape.
"""

from __future__ import annotations

import logging
from pathlib import Path

from contextq import tokens
from contextq.errors import ContextqError, UnsupportedFileType
from contextq.files.registry import ConversionCache, ProcessContext, Registry, StreamInfo
from contextq.files.result import FileExtractionResult
from contextq.settings import Settings

log = logging.getLogger(__name__)

_registry: Registry | None = None


def default_registry() -> Registry:
    global _registry
    if _registry is None:
        from contextq.files.builtin import build_registry

        _registry = build_registry()
    return _registry


def process_file(
    path: Path,
    filename: str,
    *,
    settings: Settings,
    cache: ConversionCache | None = None,
    registry: Registry | None = None,
    work_dir: Path | None = None,
    reraise: tuple[type[BaseException], ...] = (),
) -> FileExtractionResult:
    from contextq.files.detect import detect

    info: StreamInfo | None = None
    try:
        info = detect(path, filename)
        if info.category == "unsupported":
            raise UnsupportedFileType(
                f"unsupported file type ({info.media_type}, detected from "
                f"{'content' if info.extension else 'content; no extension'}): "
                "contextq reads text, code, tables, JSON/YAML/XML, documents, images and audio"
            )
        processor = (registry or default_registry()).find(info)
        if processor is None:
            raise UnsupportedFileType(f"unsupported file type: no processor for {info.file_type}")
        ctx = ProcessContext(settings=settings, cache=cache, work_dir=work_dir)
        result = processor.process(path, info, ctx)
    except reraise:
        raise
    except BaseException as exc:  # noqa: BLE001 - every input error must become a row status
        if not isinstance(exc, Exception):
            raise  # KeyboardInterrupt, SystemExit
        result = _failure_from(exc, info)
    if result.success:
        finalize(result, settings)
    if info is not None:
        result.metadata.setdefault("detected_from", "extension" if info.extension else "content")
    return result


def _failure_from(exc: Exception, info: StreamInfo | None) -> FileExtractionResult:
    if isinstance(exc, ContextqError):
        message = str(exc)
    elif isinstance(exc, RecursionError):
        message = "the file is nested too deeply to read safely"
    elif isinstance(exc, MemoryError):
        message = "the file needs more memory than a worker may use; split it or shrink it"
    else:
        log.exception("processing %s failed", info.file_type if info else "file")
        kind = info.file_type if info else "file"
        message = (
            f"could not read this {kind} file: it looks corrupt or is not really a {kind} "
            f"({type(exc).__name__}: {str(exc)[:200]})"
        )
    if info is None:
        return FileExtractionResult.failure(message)
    return FileExtractionResult.failure(
        message, file_type=info.file_type, category=info.category, media_type=info.media_type
    )


def finalize(result: FileExtractionResult, settings: Settings) -> None:
    """Token counts and the final cuts every processed text goes through."""
    text = result.content or ""
    # strip NUL: PostgreSQL refuses it in text, and no model wants it
    if "\x00" in text:
        text = text.replace("\x00", "")
    if result.token_count is None:
        result.token_count = (
            result.full_text_tokens
            if result.full_text_tokens is not None
            else tokens.count_tokens(text)
        )
    if len(text) > settings.MAX_TOTAL_OUTPUT:
        result.truncation.record("chars", settings.MAX_TOTAL_OUTPUT, len(text))
        text = text[: settings.MAX_TOTAL_OUTPUT]
    if result.processed_token_count is None or result.content != text:
        kept, total, kept_n = tokens.truncate_to_tokens(text, settings.MAX_TOKENS_PER_FILE)
        if kept_n < total:
            result.truncation.record("tokens", kept_n, max(total, result.token_count or 0))
            text = kept
        if result.binary is None or result.processed_token_count is None:
            result.processed_token_count = kept_n
    if result.truncation.truncated and result.content is not None and text:
        text = text.rstrip() + f"\n\n[truncated: {result.truncation.summary}]\n"
    result.content = text
