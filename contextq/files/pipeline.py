"""process_file: detect → processor → final cuts (MAX_TOTAL_OUTPUT, MAX_TOKENS_PER_FILE).

Every failure becomes a `FileExtractionResult` with `success=False` and an
error a person can act on; only the exception types the caller passes in
`reraise` (e.g. Celery's SoftTimeLimitExceeded) escape.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from contextq import tokens
from contextq.errors import ContextqError, UnsupportedFileType
from contextq.files.builtin import build_registry
from contextq.files.clean import clean_text, clean_value
from contextq.files.detect import detect
from contextq.files.formats import BARE_NAMES, EXTENSIONS
from contextq.files.registry import ConversionCache, ProcessContext, Registry, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.settings import Settings

log = logging.getLogger(__name__)


@functools.cache
def default_registry() -> Registry:
    """The built-in processors, built once per process."""
    return build_registry()


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
    info: StreamInfo | None = None
    try:
        info = detect(path, filename)
        if info.category == "unsupported":
            raise UnsupportedFileType(_unsupported_message(info))
        registry = registry or default_registry()
        processor = registry.find(info)
        if processor is None:
            raise UnsupportedFileType(f"unsupported file type: no processor for {info.file_type}")
        part = functools.partial(process_file, cache=cache, registry=registry, reraise=reraise)
        ctx = ProcessContext(
            settings=settings, cache=cache, work_dir=work_dir, process_part=part, reraise=reraise
        )
        result = processor.process(path, info, ctx)
    except reraise:
        raise
    except BaseException as exc:  # every input error must become a row status
        if not isinstance(exc, Exception):
            raise  # KeyboardInterrupt, SystemExit
        result = _failure_from(exc, info)
    if result.success:
        finalize(result, settings)
    if info is not None:
        result.metadata.setdefault("detected_from", _detected_from(info))
    return result


_KIND_WORDS = {
    "executable": "an executable program",
    "binary": "binary data of no known format",
    "zip-misnamed": "a zip archive that is not a document of that kind",
    "zip-damaged": "a damaged or truncated zip archive",
    "archive": "a compressed archive (only .zip archives are opened)",
    "ole2": "an old-style Office file of a kind not read here (only XLS and MSG are)",
}


def _unsupported_message(info: StreamInfo) -> str:
    what = _KIND_WORDS.get(info.file_type, f"of type {info.file_type} ({info.media_type})")
    named = f" although its name ends in {info.extension}" if info.extension else ""
    return (
        f"unsupported file: its content is {what}{named}; contextq reads text, code, "
        "tables, JSON/YAML/TOML/XML, documents, images and audio"
    )


def _detected_from(info: StreamInfo) -> str:
    claimed = EXTENSIONS.get(info.extension) or BARE_NAMES.get(info.filename.lower())
    return "extension" if claimed and claimed.file_type == info.file_type else "content"


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
        # a parser's own exception: the file may be damaged, or use something that is not
        # read here; say both, and never blame the file alone for a gap of ours
        message = (
            f"could not read this {kind} file: it may be damaged, or use a feature contextq "
            f"does not read yet ({type(exc).__name__}: {str(exc)[:200]})"
        )
    if info is None:
        return FileExtractionResult.failure(message)
    return FileExtractionResult.failure(
        message, file_type=info.file_type, category=info.category, media_type=info.media_type
    )


def finalize(result: FileExtractionResult, settings: Settings) -> None:
    """Token counts and the final cuts every processed text goes through.

    The content that leaves here is cleaned (`clean.clean_text`: the only place
    that removes control characters, noncharacters and U+FFFD), and, truncation
    note included, is at most MAX_TOTAL_OUTPUT characters and MAX_TOKENS_PER_FILE
    tokens; `processed_token_count` is its exact count. Results that carry a binary
    artefact with their own `processed_token_count` (images) keep that count.
    """
    text = clean_text(result.content or "")
    result.metadata = clean_value(result.metadata)
    if result.token_count is None:
        result.token_count = (
            result.full_text_tokens
            if result.full_text_tokens is not None
            else tokens.count_tokens(text)
        )
    own_count = result.binary is not None and result.processed_token_count is not None
    reserve_chars = reserve_tokens = 0
    for _ in range(6):
        trunc, content, known = _cut(
            result,
            text=text,
            settings=settings,
            reserve_chars=reserve_chars,
            reserve_tokens=reserve_tokens,
            own_count=own_count,
        )
        n = tokens.count_tokens(content) if known is None else known
        over_tokens = 0 if own_count else n - settings.MAX_TOKENS_PER_FILE
        over_chars = len(content) - settings.MAX_TOTAL_OUTPUT
        if over_tokens <= 0 and over_chars <= 0:
            break
        # the note pushed it over: leave room for it and cut again
        reserve_tokens += max(over_tokens, 0) + (1 if over_tokens > 0 else 0)
        reserve_chars += max(over_chars, 0)
    else:  # limits too small to hold a note: a hard cut of everything
        content = content[: settings.MAX_TOTAL_OUTPUT]
        if not own_count:
            content, _, n = tokens.truncate_to_tokens(content, settings.MAX_TOKENS_PER_FILE)
    result.truncation = trunc
    result.content = content
    if not own_count:
        result.processed_token_count = n
    _reconcile_counts(result)


def _reconcile_counts(result: FileExtractionResult) -> None:
    """`token_count` is what the whole content would cost uncut; `processed_token_count`
    what is sent. So processed ≤ whole, and the two are equal when nothing was cut."""
    processed = result.processed_token_count
    if processed is None:
        return
    if (
        (not result.truncation.truncated and result.binary is None)
        or result.token_count is None
        or result.token_count < processed
    ):
        result.token_count = processed


def _cut(
    result: FileExtractionResult,
    *,
    text: str,
    settings: Settings,
    reserve_chars: int,
    reserve_tokens: int,
    own_count: bool,
) -> tuple[TruncationInfo, str, int | None]:
    """(truncation, content, its token count when already known: no note was added)."""
    trunc = TruncationInfo()
    trunc.merge(result.truncation)
    char_limit = max(settings.MAX_TOTAL_OUTPUT - reserve_chars, 0)
    if len(text) > char_limit:
        trunc.record("chars", char_limit, len(text))
        text = text[:char_limit]
    known: int | None = None
    if not own_count:
        budget = max(settings.MAX_TOKENS_PER_FILE - reserve_tokens, 0)
        kept, total, known = tokens.truncate_to_tokens(text, budget)
        if known < total:
            trunc.record("tokens", known, max(total, result.token_count or 0))
            text = kept
    if trunc.truncated and result.content is not None and text:
        text = text.rstrip() + f"\n\n[truncated: {trunc.summary}]\n"
        known = None  # the note changes the count
    return trunc, text, known
