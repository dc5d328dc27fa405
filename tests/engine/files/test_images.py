"""Images: decode-validated, oriented, resized by byte size or dimension, token estimates."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from contextq.files import pipeline
from contextq.files.images import (
    ImageProcessor,
    anthropic_tokens,
    estimate_tokens,
    openai_high_tokens,
)
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.settings import Settings
from tests.engine.files import media_samples as samples

MEDIA = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "bmp": "image/bmp",
    "tiff": "image/tiff",
}


def run(tmp_path: Path, name: str, data: bytes, file_type: str, settings: Settings) -> Any:
    path = tmp_path / name
    path.write_bytes(data)
    info = StreamInfo(
        filename=name,
        extension=path.suffix,
        file_type=file_type,
        category="image",
        media_type=MEDIA[file_type],
        size=len(data),
    )
    return ImageProcessor().process(path, info, ProcessContext(settings=settings))


def decoded(data: bytes) -> Any:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


@pytest.fixture
def settings() -> Settings:
    return Settings(ENVIRONMENT="test")


@pytest.mark.parametrize(
    ("name", "fmt", "file_type", "mode"),
    [
        ("a.png", "PNG", "png", "RGB"),
        ("a.png", "PNG", "png", "RGBA"),
        ("a.jpg", "JPEG", "jpeg", "RGB"),
        ("a.gif", "GIF", "gif", "P"),
        ("a.webp", "WEBP", "webp", "RGB"),
    ],
)
def test_small_supported_images_pass_through_unchanged(
    tmp_path: Path, settings: Settings, name: str, fmt: str, file_type: str, mode: str
) -> None:
    data = samples.image_bytes(fmt, (64, 48), mode=mode)
    result = run(tmp_path, name, data, file_type, settings)
    assert result.success
    assert result.binary == data  # nothing changed: the original bytes
    assert result.binary_media_type == MEDIA[file_type]
    meta = result.metadata
    assert (meta["width"], meta["height"]) == (64, 48)
    assert (meta["original_width"], meta["original_height"]) == (64, 48)
    assert meta["bytes"] == meta["original_bytes"] == len(data)
    assert meta["format"] == fmt and meta["resized"] is False
    assert result.content is not None
    assert f"Image: {fmt}, 64×48 px" in result.content
    assert result.token_count == result.processed_token_count == 255  # 1 tile: 170 + 85
    assert not result.truncation.truncated


@pytest.mark.parametrize(("fmt", "file_type"), [("BMP", "bmp"), ("TIFF", "tiff")])
def test_bmp_and_tiff_are_converted_to_png(
    tmp_path: Path, settings: Settings, fmt: str, file_type: str
) -> None:
    data = samples.image_bytes(fmt, (70, 30))
    result = run(tmp_path, f"a.{file_type}", data, file_type, settings)
    assert result.binary_media_type == "image/png"
    img = decoded(result.binary)
    assert img.format == "PNG" and img.size == (70, 30)
    assert result.metadata["format"] == fmt and result.metadata["output_format"] == "PNG"
    assert f"Converted from {fmt} to PNG" in result.content


def test_exif_orientation_is_applied(tmp_path: Path, settings: Settings) -> None:
    data = samples.image_bytes("JPEG", (80, 40), exif_orientation=6)  # rotate 90° on display
    result = run(tmp_path, "phone.jpg", data, "jpeg", settings)
    meta = result.metadata
    assert (meta["original_width"], meta["original_height"]) == (80, 40)
    assert (meta["width"], meta["height"]) == (40, 80)
    assert meta["orientation_applied"] is True and meta["resized"] is False
    img = decoded(result.binary)
    assert img.size == (40, 80)
    assert img.getexif().get(0x0112, 1) == 1
    assert "EXIF orientation applied" in result.content


def test_over_the_byte_limit_is_resized_until_under(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_IMAGE_ATTACHMENT_SIZE=20_000)
    data = samples.image_bytes("PNG", (300, 200), noise=True)  # ~180 KB of noise
    assert len(data) > 100_000
    result = run(tmp_path, "noise.png", data, "png", settings)
    meta = result.metadata
    assert meta["resized"] is True
    assert len(result.binary) == meta["bytes"] <= 20_000
    img = decoded(result.binary)
    assert img.size == (meta["width"], meta["height"])
    assert abs(meta["width"] / meta["height"] - 1.5) < 0.05  # aspect ratio kept
    pixels = meta["width"] * meta["height"]
    assert result.truncation.summary == f"pixels: {pixels} of 60000"
    assert result.processed_token_count == openai_high_tokens(meta["width"], meta["height"])
    assert "MAX_IMAGE_ATTACHMENT_SIZE" in result.content


def test_a_jpeg_that_fits_once_re_encoded_keeps_its_size(tmp_path: Path) -> None:
    out = io.BytesIO()
    noise = Image.frombytes("RGB", (300, 200), bytes(range(256)) * 703 + bytes(232))
    noise.save(out, format="JPEG", quality=100)
    data = out.getvalue()
    settings = Settings(ENVIRONMENT="test", MAX_IMAGE_ATTACHMENT_SIZE=int(len(data) * 0.8))
    result = run(tmp_path, "q100.jpg", data, "jpeg", settings)
    meta = result.metadata
    assert (meta["width"], meta["height"]) == (300, 200) and meta["resized"] is False
    assert len(result.binary) <= settings.MAX_IMAGE_ATTACHMENT_SIZE < len(data)
    assert "Re-encoded to fit" in result.content
    assert not result.truncation.truncated


def test_dimension_strategy_limits_the_longest_side(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_IMAGE_DIMENSION=100)
    data = samples.image_bytes("PNG", (400, 250))
    result = run(tmp_path, "wide.png", data, "png", settings)
    assert (result.metadata["width"], result.metadata["height"]) == (100, 62)
    assert decoded(result.binary).size == (100, 62)
    assert result.truncation.summary == "pixels: 6200 of 100000"
    assert "MAX_IMAGE_DIMENSION" in result.content


def test_animated_gif_keeps_the_first_frame(tmp_path: Path, settings: Settings) -> None:
    data = samples.image_bytes("GIF", (32, 32), frames=3)
    assert Image.open(io.BytesIO(data)).n_frames == 3
    result = run(tmp_path, "anim.gif", data, "gif", settings)
    assert result.metadata["frames"] == 3
    img = Image.open(io.BytesIO(result.binary))
    assert img.format == "GIF" and getattr(img, "n_frames", 1) == 1
    assert "kept the first frame of 3" in result.content
    assert "2 frames dropped" in result.truncation.summary


def test_token_formulas_match_the_published_examples() -> None:
    assert openai_high_tokens(1024, 1024) == 765  # 768² → 4 tiles
    assert openai_high_tokens(2048, 4096) == 1105  # → 1024x2048 → 768x1536 → 6 tiles
    assert openai_high_tokens(100, 100) == 255
    assert anthropic_tokens(1092, 1092) == 1590  # Anthropic's largest 1:1 size, ~1590 tokens
    assert anthropic_tokens(200, 200) == 54  # 40000/750 = 53.3 → 54
    assert 1590 <= anthropic_tokens(4000, 3000) <= 1600  # scaled down to ~1.2 MP
    assert anthropic_tokens(3136, 200) == anthropic_tokens(1568, 100)  # long side 1568
    assert estimate_tokens(10, 10)["openai_low"] == 85


def test_process_file_returns_the_image_and_counts(tmp_path: Path, settings: Settings) -> None:
    data = samples.image_bytes("PNG", (1024, 1024))
    path = tmp_path / "upload"
    path.write_bytes(data)
    result = pipeline.process_file(
        path, "diagram.png", settings=settings, registry=samples.media_registry()
    )
    assert result.success and result.category == "image" and result.file_type == "png"
    assert result.binary == data and result.binary_media_type == "image/png"
    assert result.token_count == result.processed_token_count == 765
    assert result.metadata["token_estimates"] == {
        "openai_high": 765,
        "openai_low": 85,
        "anthropic": 1399,
    }
    assert "1024×1024 px" in (result.content or "")
