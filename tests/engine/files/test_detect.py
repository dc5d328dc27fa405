"""Detection: extension first, then the bytes confirm, override or refuse."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contextq.files import formats
from contextq.files.detect import detect
from tests.engine.files.conftest import SENTINEL, Samples

S = Samples

# (filename, bytes factory, expected file_type, expected category)
VECTORS: list[tuple[str, Callable[[], bytes], str, str]] = [
    # code and text by extension, confirmed as text
    ("main.py", f"print('{SENTINEL}')\n".encode, "python", "code"),
    ("app.tsx", lambda: b"export const A = () => <div/>;\n", "tsx", "code"),
    ("lib.rs", lambda: b"fn main() {}\n", "rust", "code"),
    ("Dockerfile", lambda: b"FROM python:3.11\n", "dockerfile", "code"),
    ("notes.md", lambda: b"# Title\n", "markdown", "text"),
    ("server.log", lambda: b"INFO started\n", "log", "text"),
    ("README", lambda: b"plain words\n", "text", "text"),
    ("no_extension", lambda: b"just some words\n", "text", "text"),
    ("utf16.txt", lambda: "h\u00e9llo\n".encode("utf-16"), "text", "text"),
    ("utf16-nobom.txt", lambda: ("hello world " * 20).encode("utf-16-le"), "text", "text"),
    ("mz.txt", lambda: b"MZ is how this line starts, and it is text\n", "text", "text"),
    # tables and structured
    ("data.csv", lambda: S.csv(3), "csv", "tabular"),
    ("data.tsv", lambda: S.csv(3, delimiter="\t"), "tsv", "tabular"),
    ("book.xlsx", lambda: S.xlsx({"A": [["x"]]}), "xlsx", "tabular"),
    ("book.xlsm", lambda: S.xlsx({"A": [["x"]]}), "xlsm", "tabular"),
    ("book.xls", lambda: S.xls({"A": [["x"]]}), "xls", "tabular"),
    ("book.ods", lambda: S.ods({"A": [["x"]]}), "ods", "tabular"),
    ("doc.json", lambda: b'{"a": 1}', "json", "structured"),
    ("doc.ndjson", lambda: b'{"a": 1}\n', "jsonl", "structured"),
    ("doc.yml", lambda: b"a: 1\n", "yaml", "structured"),
    ("pyproject.toml", lambda: b"a = 1\n", "toml", "structured"),
    ("doc.xml", lambda: b"<a/>", "xml", "structured"),
    # documents, images, audio by extension confirmed by content
    ("report.pdf", S.pdf, "pdf", "document"),
    ("report.docx", S.docx, "docx", "document"),
    ("book.epub", S.epub, "epub", "document"),
    ("letter.odt", S.odt, "odt", "document"),
    ("page.html", lambda: b"<!doctype html><p>x</p>", "html", "document"),
    ("pic.png", lambda: S.image("PNG"), "png", "image"),
    ("pic.jpg", lambda: S.image("JPEG"), "jpeg", "image"),
    ("pic.gif", lambda: S.image("GIF"), "gif", "image"),
    ("pic.webp", lambda: S.image("WEBP"), "webp", "image"),
    ("pic.bmp", lambda: S.image("BMP"), "bmp", "image"),
    ("pic.tiff", lambda: S.image("TIFF"), "tiff", "image"),
    ("sound.wav", S.wav, "wav", "audio"),
    ("sound.mp3", S.id3, "mp3", "audio"),
    ("sound.flac", S.flac, "flac", "audio"),
    ("sound.ogg", lambda: S.ogg(False), "ogg", "audio"),
    ("sound.opus", lambda: S.ogg(True), "opus", "audio"),
    ("sound.m4a", S.m4a, "m4a", "audio"),
    # content contradicts the extension: the content wins or the file is refused
    ("table.csv", lambda: S.image("PNG"), "png", "image"),
    ("photo.jpg", lambda: S.image("PNG"), "png", "image"),
    ("report.pdf", S.elf, "executable", "unsupported"),
    ("report.pdf", S.pe, "executable", "unsupported"),
    ("report.docx", lambda: S.zip({"hello.txt": b"hi"}), "zip-misnamed", "unsupported"),
    ("folder.zip", lambda: S.zip({"hello.txt": b"hi"}), "zip", "document"),
    ("upload", lambda: S.zip({"hello.txt": b"hi"}), "zip", "document"),
    ("broken.zip", lambda: S.zip({"hello.txt": b"hi"})[:-30], "zip-damaged", "unsupported"),
    ("feed.rss", lambda: b'<?xml version="1.0"?><rss version="2.0"/>', "xml", "structured"),
    ("report.docx", lambda: b"<html><body>hi</body></html>", "html", "document"),
    ("report.docx", lambda: b"not a document at all\n", "text", "text"),
    ("notes.txt", S.junk, "binary", "unsupported"),
    ("data.csv", S.junk, "binary", "unsupported"),
    ("data.json", lambda: b"\x1f\x8b\x08\x00" + S.junk(200), "archive", "unsupported"),
    ("sheet.xlsx", S.docx, "docx", "document"),
    ("sound.mp3", S.wav, "wav", "audio"),
    # no extension: the content decides
    ("upload", S.pdf, "pdf", "document"),
    ("upload", lambda: S.xlsx({"A": [["x"]]}), "xlsx", "tabular"),
    ("upload", lambda: S.xls({"A": [["x"]]}), "xls", "tabular"),
    ("upload", lambda: S.ods({"A": [["x"]]}), "ods", "tabular"),
    ("upload", S.mp3_frames, "mp3", "audio"),
    ("upload", lambda: b'<?xml version="1.0"?><a/>', "xml", "structured"),
    ("upload.bin", S.elf, "executable", "unsupported"),
]


@pytest.mark.parametrize(
    ("filename", "factory", "file_type", "category"),
    VECTORS,
    ids=[f"{v[0]}->{v[2]}" for v in VECTORS],
)
def test_detect_vectors(
    write: Callable[[str, bytes], Path],
    filename: str,
    factory: Callable[[], bytes],
    file_type: str,
    category: str,
) -> None:
    data = factory()
    info = detect(write(filename, data), filename)
    assert (info.file_type, info.category) == (file_type, category)
    assert info.size == len(data)
    assert info.media_type


def test_empty_file_does_not_crash(write: Callable[[str, bytes], Path]) -> None:
    info = detect(write("empty.csv", b""), "empty.csv")
    assert (info.file_type, info.size) == ("csv", 0)
    info = detect(write("empty", b""), "empty")
    assert info.category == "text"


def test_filename_path_parts_are_ignored(write: Callable[[str, bytes], Path]) -> None:
    info = detect(write("x.py", b"print(1)\n"), "../../etc/evil/x.py")
    assert info.filename == "x.py"
    assert info.extension == ".py"


def test_the_table_covers_55_formats() -> None:
    types = {f.file_type for f in formats.EXTENSIONS.values()}
    assert len(types) >= 55
    categories = {f.category for f in formats.EXTENSIONS.values()}
    assert categories == {"text", "code", "tabular", "structured", "document", "image", "audio"}
    for name in (
        "pdf",
        "docx",
        "pptx",
        "html",
        "epub",
        "odt",
        "rtf",
        "msg",
        "png",
        "jpeg",
        "gif",
        "webp",
        "bmp",
        "tiff",
        "mp3",
        "wav",
        "m4a",
        "flac",
        "ogg",
        "opus",
    ):
        assert name in types, name
