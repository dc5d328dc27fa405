"""Documents: a vector table of real files, the conversion cache, PDF fast path and fallback."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from contextq.errors import InvalidInput
from contextq.files import documents, mdconvert, pdf, pipeline
from contextq.files.documents import Converted, DocumentProcessor, convert_document
from contextq.files.registry import MemoryConversionCache, ProcessContext, StreamInfo
from contextq.settings import Settings
from tests.engine.files import media_samples as samples
from tests.engine.files.media_samples import SENTINEL


@dataclass(frozen=True)
class Vector:
    filename: str
    make: Callable[[], bytes]
    file_type: str
    must_include: tuple[str, ...]
    must_not_include: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


VECTORS = [
    Vector(
        "report.docx",
        samples.docx_bytes,
        "docx",
        (SENTINEL, "# Quarterly report"),
        ("word/document.xml",),
        {"converter": "markitdown"},
    ),
    Vector(
        "deck.pptx",
        lambda: samples.pptx_bytes(3),
        "pptx",
        (SENTINEL, "# Slide title 1", "# Slide title 3", f"{SENTINEL} on slide 3"),
        (),
        {"slides": 3, "pages": 3, "converter": "markitdown"},
    ),
    Vector(
        "paper.pdf",
        lambda: samples.pdf_bytes(3, per_page_sentinel=True),
        "pdf",
        ("## Page 1", "## Page 3", samples.sentinel_for(1), samples.sentinel_for(3), SENTINEL),
        ("## Page 4",),
        {"pages": 3, "converter": "pdfium"},
    ),
    Vector(
        "page.html",
        samples.html_bytes,
        "html",
        (SENTINEL, "# Heading one", "* beta"),
        ("SCRIPT-ONLY-TEXT", "<p>"),
        {"converter": "markdownify"},
    ),
    Vector(
        "book.epub",
        samples.epub_bytes,
        "epub",
        (SENTINEL, "# Chapter One", "Epub Title", "Ann Author"),
        ("<p>",),
    ),
    Vector(
        "notes.odt",
        samples.odt_bytes,
        "odt",
        ("# ODT heading", f"ODT body {SENTINEL}."),
        ("<text:p",),
        {"converter": "contextq-odt"},
    ),
    Vector(
        "memo.rtf",
        samples.rtf_bytes,
        "rtf",
        (SENTINEL, "RTF heading", "café", "€ euro"),
        ("HIDDEN-INFO-TITLE", "HIDDEN-GENERATOR", "Times New Roman", "\\par", "fonttbl"),
        {"converter": "contextq-rtf"},
    ),
    Vector(
        "mail.msg",
        samples.msg_bytes,
        "msg",
        (
            "**From:** ann@example.com",
            "**To:** Bob Builder",
            "**Subject:** Quarterly numbers",
            f"Hello Bob, the code is {SENTINEL}.",
        ),
        ("__substg1.0",),
        {"converter": "markitdown"},
    ),
]
MEDIA_TYPES = {
    "pdf": "application/pdf",
    "html": "text/html",
    "epub": "application/epub+zip",
    "odt": "application/vnd.oasis.opendocument.text",
    "rtf": "application/rtf",
    "msg": "application/vnd.ms-outlook",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}


def info_for(path: Path, file_type: str) -> StreamInfo:
    return StreamInfo(
        filename=path.name,
        extension=path.suffix,
        file_type=file_type,
        category="document",
        media_type=MEDIA_TYPES.get(file_type, "application/octet-stream"),
        size=path.stat().st_size,
    )


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def process_file(path: Path, filename: str, **kwargs: Any) -> Any:
    """The real pipeline (detection → processor → finalize) over the media processors."""
    return pipeline.process_file(path, filename, registry=samples.media_registry(), **kwargs)


@pytest.fixture
def settings() -> Settings:
    return Settings(ENVIRONMENT="test")


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.filename)
def test_vector_direct(vector: Vector, tmp_path: Path, settings: Settings) -> None:
    path = write(tmp_path, vector.filename, vector.make())
    result = DocumentProcessor().process(
        path, info_for(path, vector.file_type), ProcessContext(settings=settings)
    )
    assert result.success and result.category == "document"
    assert result.file_type == vector.file_type
    assert result.content is not None
    for text in vector.must_include:
        assert text in result.content, text
    for text in vector.must_not_include:
        assert text not in result.content, text
    for key, value in vector.metadata.items():
        assert result.metadata[key] == value, key
    assert result.full_text_tokens is not None and result.full_text_tokens > 5
    assert result.cache_hit is False


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.filename)
def test_vector_through_process_file(vector: Vector, tmp_path: Path, settings: Settings) -> None:
    path = write(tmp_path, "upload.bin", vector.make())
    result = process_file(path, vector.filename, settings=settings, work_dir=tmp_path)
    assert result.success, result.error
    assert (result.file_type, result.category) == (vector.file_type, "document")
    assert result.content is not None
    for text in vector.must_include:
        assert text in result.content, text
    for text in vector.must_not_include:
        assert text not in result.content, text
    assert result.token_count == result.full_text_tokens
    assert result.processed_token_count == result.token_count  # small: nothing cut
    assert not result.truncation.truncated


def test_long_pdf_is_cut_by_tokens_with_full_count(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_TOKENS_PER_FILE=300)
    data = samples.pdf_bytes(
        12,
        per_page_sentinel=True,
        lines_per_page=20,
        text="the quick brown fox jumps over the lazy dog",
    )
    result = process_file(write(tmp_path, "long.pdf", data), "long.pdf", settings=settings)
    assert result.success and result.content is not None
    assert result.metadata["pages"] == 12
    assert samples.sentinel_for(1) in result.content
    assert samples.sentinel_for(12) not in result.content
    # the content that leaves, truncation note included, is at most 300 tokens
    assert result.processed_token_count is not None
    assert 250 <= result.processed_token_count <= 300
    assert result.token_count is not None and result.token_count > 2000
    shown = result.truncation.shown["tokens"]
    assert shown < result.processed_token_count
    assert result.truncation.summary == f"tokens: {shown:g} of {result.token_count}"
    assert f"[truncated: tokens: {shown:g} of {result.token_count}]" in result.content


def test_lines_limit_does_not_apply_to_documents(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_LINES=5, MAX_TOKENS_PER_FILE=100_000)
    data = samples.pdf_bytes(3, per_page_sentinel=True, lines_per_page=10)
    result = process_file(write(tmp_path, "p.pdf", data), "p.pdf", settings=settings)
    assert result.success and result.content is not None
    assert result.content.count(SENTINEL) == 30
    assert not result.truncation.truncated


def test_scanned_pdf_succeeds_with_a_warning(tmp_path: Path, settings: Settings) -> None:
    data = samples.pdf_bytes(2, blank=True)
    result = process_file(write(tmp_path, "scan.pdf", data), "scan.pdf", settings=settings)
    assert result.success
    assert result.metadata["pages"] == 2
    assert "no extractable text" in result.metadata["warning"]
    assert result.content is not None
    assert "no extractable text" in result.content and "OCR" in result.content


def test_markitdown_is_built_once_per_process_without_telemetry() -> None:
    md = mdconvert.get_markitdown()
    assert md is mdconvert.get_markitdown()  # one instance per process
    assert os.environ.get("ORT_DISABLE_TELEMETRY") == "1"


def test_pdf_falls_back_to_pdfminer_when_pdfium_fails(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fault injection: make PDFium refuse every file, as it does on PDFs it cannot parse
    def refuse(data: bytes) -> pdf.PdfText:
        raise pdf.PdfUnreadable("injected: PDFium could not parse this file")

    monkeypatch.setattr(pdf, "extract_text", refuse)
    path = write(tmp_path, "fallback.pdf", samples.pdf_bytes(1))
    result = DocumentProcessor().process(path, info_for(path, "pdf"), ProcessContext(settings))
    assert result.metadata["converter"] == "pdfminer"
    assert result.metadata["pages"] == 1
    assert result.content is not None and SENTINEL in result.content


def test_encrypted_pdf_is_refused_with_a_reason(tmp_path: Path, settings: Settings) -> None:
    path = write(tmp_path, "locked.pdf", samples.pdf_bytes(1, user_password="s3cret"))
    with pytest.raises(InvalidInput, match="encrypted with a password"):
        DocumentProcessor().process(path, info_for(path, "pdf"), ProcessContext(settings))


def test_owner_password_only_pdf_is_readable(tmp_path: Path, settings: Settings) -> None:
    # encrypted for permissions only (empty user password): readers open it without asking
    path = write(tmp_path, "perm.pdf", samples.pdf_bytes(1, user_password=""))
    result = DocumentProcessor().process(path, info_for(path, "pdf"), ProcessContext(settings))
    assert result.content is not None and SENTINEL in result.content


# --- the conversion cache ---------------------------------------------------------------


class CountingConverter:
    """Wraps our converter function and counts the conversions that really ran."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.calls = 0
        self.delay_s = delay_s
        self._lock = threading.Lock()

    def __call__(self, data: bytes, info: StreamInfo, settings: Settings, path: Path) -> Converted:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay_s)
        return convert_document(data, info, settings, path)


def test_same_bytes_twice_hit_the_cache(tmp_path: Path, settings: Settings) -> None:
    counting = CountingConverter()
    processor = DocumentProcessor(convert=counting)
    cache = MemoryConversionCache()
    data = samples.docx_bytes()
    first_path = write(tmp_path, "a.docx", data)
    second_path = write(tmp_path, "copy-of-a.docx", data)  # another upload of the same bytes
    first = processor.process(
        first_path, info_for(first_path, "docx"), ProcessContext(settings, cache)
    )
    second = processor.process(
        second_path, info_for(second_path, "docx"), ProcessContext(settings, cache)
    )
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert counting.calls == 1
    assert second.content == first.content and SENTINEL in (second.content or "")
    assert second.full_text_tokens == first.full_text_tokens
    assert second.metadata == first.metadata


def test_different_bytes_or_type_are_different_keys(tmp_path: Path, settings: Settings) -> None:
    counting = CountingConverter()
    processor = DocumentProcessor(convert=counting)
    cache = MemoryConversionCache()
    one = write(tmp_path, "one.docx", samples.docx_bytes(["first text"]))
    two = write(tmp_path, "two.docx", samples.docx_bytes(["second text"]))
    for path in (one, two):
        result = processor.process(path, info_for(path, "docx"), ProcessContext(settings, cache))
        assert not result.cache_hit
    assert counting.calls == 2
    sha = "0" * 64
    assert documents.cache_key(sha, "html") != documents.cache_key(sha, "docx")
    key = documents.cache_key(sha, "pdf")
    assert sha in key and "0.1.8" in key and f"c{documents.CONVERTER_VERSION}" in key
    assert len(key) <= 128


def test_process_file_passes_the_cache(tmp_path: Path, settings: Settings) -> None:
    cache = MemoryConversionCache()
    data = samples.pptx_bytes(2)
    first = process_file(write(tmp_path, "a.pptx", data), "a.pptx", settings=settings, cache=cache)
    second = process_file(write(tmp_path, "b.pptx", data), "b.pptx", settings=settings, cache=cache)
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert second.content == first.content
    assert second.metadata["slides"] == 2


def test_two_threads_converting_the_same_bytes_run_one_conversion(
    tmp_path: Path, settings: Settings
) -> None:
    counting = CountingConverter(delay_s=0.3)
    processor = DocumentProcessor(convert=counting)
    cache = MemoryConversionCache()
    data = samples.pdf_bytes(2, per_page_sentinel=True)
    paths = [write(tmp_path, f"upload{i}.pdf", data) for i in range(2)]
    barrier = threading.Barrier(2)
    results: list[Any] = [None, None]

    def run(i: int) -> None:
        barrier.wait()
        ctx = ProcessContext(settings, cache)
        results[i] = processor.process(paths[i], info_for(paths[i], "pdf"), ctx)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert counting.calls == 1
    assert sorted(r.cache_hit for r in results) == [False, True]
    assert results[0].content == results[1].content
    assert samples.sentinel_for(2) in results[0].content


def test_a_corrupt_cache_entry_is_converted_again(tmp_path: Path, settings: Settings) -> None:
    counting = CountingConverter()
    processor = DocumentProcessor(convert=counting)
    cache = MemoryConversionCache()
    data = samples.html_bytes()
    path = write(tmp_path, "p.html", data)
    import hashlib

    cache.put(documents.cache_key(hashlib.sha256(data).hexdigest(), "html"), "not json")
    result = processor.process(path, info_for(path, "html"), ProcessContext(settings, cache))
    assert counting.calls == 1 and not result.cache_hit
    assert SENTINEL in (result.content or "")


def test_failed_conversion_is_not_cached(tmp_path: Path, settings: Settings) -> None:
    cache = MemoryConversionCache()
    path = write(tmp_path, "bad.pdf", samples.pdf_bytes(2)[:500])
    for _ in range(2):
        with pytest.raises(InvalidInput, match="truncated or corrupt"):
            DocumentProcessor().process(
                path, info_for(path, "pdf"), ProcessContext(settings, cache)
            )
    assert cache._data == {}
