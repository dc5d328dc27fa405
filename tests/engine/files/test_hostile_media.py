"""Hostile and broken documents, images and audio: each fails with a reason or is made safe."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from contextq.errors import HostileInput, InvalidInput
from contextq.files import pipeline
from contextq.files.audio import AudioProcessor
from contextq.files.documents import DocumentProcessor
from contextq.files.images import ImageProcessor
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.settings import Settings
from tests.engine.files import media_samples as samples
from tests.engine.files.media_samples import SENTINEL


def process(tmp_path: Path, filename: str, data: bytes, settings: Settings | None = None) -> Any:
    """Through the real pipeline: detection from content, processor, finalize."""
    path = tmp_path / f"blob-{len(list(tmp_path.iterdir()))}"
    path.write_bytes(data)
    return pipeline.process_file(
        path,
        filename,
        settings=settings or Settings(ENVIRONMENT="test"),
        registry=samples.media_registry(),
    )


def info(path: Path, file_type: str, category: Any) -> StreamInfo:
    return StreamInfo(
        filename=path.name,
        extension=path.suffix,
        file_type=file_type,
        category=category,
        media_type="application/octet-stream",
        size=path.stat().st_size,
    )


def assert_next_file_works(tmp_path: Path) -> None:
    result = process(tmp_path, "after.docx", samples.docx_bytes())
    assert result.success and SENTINEL in (result.content or "")


# --- documents --------------------------------------------------------------------------


def test_docx_with_too_many_entries_is_refused(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_ARCHIVE_ENTRIES=100)
    result = process(tmp_path, "many.docx", samples.zip_bomb_docx(entries=200), settings)
    assert not result.success
    assert "entries" in (result.error or "") and "MAX_ARCHIVE_ENTRIES" in (result.error or "")
    assert_next_file_works(tmp_path)


def test_docx_that_expands_hugely_is_refused(tmp_path: Path) -> None:
    data = samples.zip_bomb_docx(declared=64 * 1024 * 1024)  # 64 MB of zeros, ~65 KB on disk
    assert len(data) < 200_000
    result = process(tmp_path, "bomb.docx", data)
    assert not result.success
    assert "zip bomb" in (result.error or "") and "MAX_ARCHIVE_RATIO" in (result.error or "")
    assert_next_file_works(tmp_path)


def test_html_named_docx_is_read_by_its_content(tmp_path: Path) -> None:
    result = process(tmp_path, "report.docx", samples.html_bytes())
    assert result.success and result.file_type == "html"
    assert SENTINEL in (result.content or "")


def test_not_a_zip_docx_fails_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "fake.docx"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    with pytest.raises(InvalidInput, match="not a valid zip container"):
        DocumentProcessor().process(
            path, info(path, "docx", "document"), ProcessContext(Settings(ENVIRONMENT="test"))
        )


def test_truncated_pdf_fails_with_a_reason(tmp_path: Path) -> None:
    data = samples.pdf_bytes(3)
    for cut in (data[:600], data[: len(data) // 2]):
        result = process(tmp_path, "cut.pdf", cut)
        assert not result.success
        assert "truncated or corrupt" in (result.error or "")
    assert_next_file_works(tmp_path)


def test_encrypted_pdf_fails_with_a_reason(tmp_path: Path) -> None:
    result = process(tmp_path, "locked.pdf", samples.pdf_bytes(1, user_password="pw"))
    assert not result.success
    assert "encrypted with a password" in (result.error or "")


def test_pdf_named_png_is_read_as_a_pdf(tmp_path: Path) -> None:
    result = process(tmp_path, "photo.png", samples.pdf_bytes(1))
    assert result.success and result.file_type == "pdf" and result.category == "document"
    assert SENTINEL in (result.content or "")


def test_pdf_bytes_are_not_an_image(tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(samples.pdf_bytes(1))
    with pytest.raises(InvalidInput, match="not a readable image"):
        ImageProcessor().process(
            path, info(path, "png", "image"), ProcessContext(Settings(ENVIRONMENT="test"))
        )


def test_rtf_nested_100000_deep_does_not_crash(tmp_path: Path) -> None:
    data = b"{\\rtf1 " + b"{" * 100_000 + SENTINEL.encode() + b"}" * 100_000 + b"}"
    result = process(tmp_path, "deep.rtf", data)
    assert result.success and SENTINEL in (result.content or "")


def test_rtf_named_file_that_is_not_rtf(tmp_path: Path) -> None:
    path = tmp_path / "x.rtf"
    path.write_bytes(b"hello, not rtf")
    with pytest.raises(InvalidInput, match="not RTF"):
        DocumentProcessor().process(
            path, info(path, "rtf", "document"), ProcessContext(Settings(ENVIRONMENT="test"))
        )


def test_odt_with_billion_laughs_is_refused(tmp_path: Path) -> None:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
            for i in range(1, 10)
        )
        + ']><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:'
        'office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0">'
        "<office:body><office:text><text:p>&lol9;</text:p></office:text></office:body>"
        "</office:document-content>"
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(samples.odt_bytes())) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            body = laughs.encode() if item.filename == "content.xml" else src.read(item.filename)
            dst.writestr(item, body)
    path = tmp_path / "laughs.odt"
    path.write_bytes(buf.getvalue())
    with pytest.raises(HostileInput, match="forbidden"):
        DocumentProcessor().process(
            path, info(path, "odt", "document"), ProcessContext(Settings(ENVIRONMENT="test"))
        )


def _docx_with_dtd(dtd: str, reference: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(samples.docx_bytes())) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "word/document.xml":
                text = body.decode().split("?>", 1)[1]
                text = text.replace("The sentinel is", f"The sentinel {reference} is")
                body = ('<?xml version="1.0" encoding="UTF-8"?>' + dtd + text).encode()
            dst.writestr(item, body)
    return out.getvalue()


LAUGHS_DTD = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>"
)


@pytest.mark.parametrize(
    ("dtd", "reference", "leak"),
    [
        ('<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', "&xxe;", "root:"),
        (LAUGHS_DTD, "&lol9;", "lollollollol"),
    ],
    ids=["xxe", "billion-laughs"],
)
def test_docx_with_xml_entities_leaks_and_expands_nothing(
    tmp_path: Path, dtd: str, reference: str, leak: str
) -> None:
    result = process(tmp_path, "evil.docx", _docx_with_dtd(dtd, reference))
    assert leak not in (result.content or "") and leak not in (result.error or "")
    assert not result.success  # the XML parser refuses the entity declarations
    assert "could not convert this DOCX" in (result.error or "")
    assert_next_file_works(tmp_path)


def test_broken_msg_fails_with_a_reason(tmp_path: Path) -> None:
    ole_magic = bytes.fromhex("D0CF11E0A1B11AE1")
    for name, data in (
        ("cut.msg", samples.msg_bytes()[:1000]),
        ("junk.msg", ole_magic + b"\xff" * 3000),
        ("text.msg", b"hello, not an OLE file"),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InvalidInput, match="corrupt, truncated"):
            DocumentProcessor().process(
                path, info(path, "msg", "document"), ProcessContext(Settings(ENVIRONMENT="test"))
            )


# --- images -----------------------------------------------------------------------------


def test_decompression_bomb_png_is_refused(tmp_path: Path) -> None:
    data = samples.png_bomb_bytes(30_000, 30_000)
    assert len(data) < 1000
    result = process(tmp_path, "bomb.png", data)
    assert not result.success
    assert "MAX_IMAGE_PIXELS" in (result.error or "")
    assert_next_file_works(tmp_path)


def test_over_max_image_pixels_is_an_error_not_a_warning(tmp_path: Path) -> None:
    # between the limit and twice the limit Pillow only warns; here that is an error too
    settings = Settings(ENVIRONMENT="test", MAX_IMAGE_PIXELS=3000)
    result = process(tmp_path, "a.png", samples.image_bytes("PNG", (64, 48)), settings)
    assert not result.success
    assert "3072" in (result.error or "") and "MAX_IMAGE_PIXELS" in (result.error or "")


def test_truncated_png_fails_with_a_reason(tmp_path: Path) -> None:
    data = samples.image_bytes("PNG", (200, 200), noise=True)[:3000]
    result = process(tmp_path, "cut.png", data)
    assert not result.success
    assert "truncated or corrupt" in (result.error or "")


# --- audio ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "data", "reason"),
    [
        (
            "bogus.mp3",
            b"ID3\x04\x00\x00\x00\x00\x00\x10" + b"\xff\xfb" * 50,
            "could not read audio",
        ),
        ("zeros.wav", b"RIFF\x24\x00\x00\x00WAVE" + b"\x00" * 4000, "could not read audio"),
        ("zero-channels.wav", None, "could not read audio|no audio data"),
        ("cut.mp3", None, "truncated"),
    ],
    ids=["bogus-mp3-header", "wav-zero-chunks", "wav-zero-channels", "truncated-mp3"],
)
def test_broken_audio_fails_with_a_reason(
    tmp_path: Path, filename: str, data: bytes | None, reason: str
) -> None:
    if filename == "zero-channels.wav":
        good = samples.wav_bytes(1.0)
        data = good[:22] + b"\x00\x00" + good[24:]  # fmt chunk: 0 channels
    elif filename == "cut.mp3":
        data = samples.encoded_audio_bytes("mp3", "libmp3lame", 3.0)[:2000]
    assert data is not None
    path = tmp_path / filename
    path.write_bytes(data)
    file_type = filename.rsplit(".", 1)[1]
    with pytest.raises(InvalidInput, match=reason):
        AudioProcessor().process(
            path, info(path, file_type, "audio"), ProcessContext(Settings(ENVIRONMENT="test"))
        )


def test_empty_files_fail_with_a_reason(tmp_path: Path) -> None:
    settings = ProcessContext(Settings(ENVIRONMENT="test"))
    for processor, name, file_type, category in (
        (AudioProcessor(), "e.mp3", "mp3", "audio"),
        (ImageProcessor(), "e.png", "png", "image"),
        (DocumentProcessor(), "e.pdf", "pdf", "document"),
    ):
        path = tmp_path / name
        path.write_bytes(b"")
        with pytest.raises(InvalidInput, match="empty"):
            processor.process(path, info(path, file_type, category), settings)
