"""Images: validated by decoding, EXIF-oriented, stripped of metadata, resized to the limits.

PNG/JPEG/GIF/WEBP keep their format; BMP and TIFF are converted to PNG so the
artefact is a type every model API accepts. Pillow opens only an allow-list
of formats and its decompression-bomb guard is an error here. The result's
`binary` is the image to send (the original bytes less their metadata blocks
when nothing else had to change, see `exif`); `content` describes it. Token
estimates follow each provider's published formula (see `estimate_tokens`).
"""

from __future__ import annotations

import io
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextq.errors import HostileInput, InvalidInput
from contextq.files.exif import exif_fields, strip_metadata
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo, human_bytes
from contextq.settings import Settings

ALLOWED_FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF")
_KEEP_FORMAT = frozenset({"PNG", "JPEG", "GIF", "WEBP"})
_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
_MAX_RESIZE_ROUNDS = 12
_ANTHROPIC_MAX_PIXELS = 1600 * 750
ESTIMATE_FORMULAS = (
    "openai_high: fit in 2048x2048, shortest side to 768, 170 per 512-px tile + 85; "
    "openai_low: 85; anthropic: width*height/750 after fitting 1568 px long side and 1.2 MP"
)


def openai_high_tokens(width: int, height: int) -> int:
    """OpenAI high detail: fit 2048², shortest side ≤ 768, 170 tokens per 512-px tile + 85."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(int(w) / 512) * math.ceil(int(h) / 512)
    return 170 * max(tiles, 1) + 85


def anthropic_tokens(width: int, height: int) -> int:
    """Anthropic: width*height/750 after scaling to ≤ 1568 px long side and ≤ ~1600 tokens.

    Anthropic's largest sizes (1092x1092, 951x1268, 784x1568 ...) are ~1.15-1.2 MP; the cap
    used here is 1600 tokens = 1.2 MP.
    """
    w, h = float(width), float(height)
    scale = min(1.0, 1568 / max(w, h), math.sqrt(_ANTHROPIC_MAX_PIXELS / (w * h)))
    return max(1, math.ceil(int(w * scale) * int(h * scale) / 750))


def estimate_tokens(width: int, height: int) -> dict[str, int]:
    return {
        "openai_high": openai_high_tokens(width, height),
        "openai_low": 85,
        "anthropic": anthropic_tokens(width, height),
    }


@dataclass
class _Decoded:
    image: Any  # PIL.Image.Image, first frame, loaded and oriented
    format: str
    mode: str
    width: int  # as stored (before orientation)
    height: int
    frames: int
    oriented: bool
    exif: dict[str, Any]  # the useful EXIF fields (exif.exif_fields)


def _decode(path: Path, settings: Settings) -> _Decoded:
    from PIL import Image, ImageOps, UnidentifiedImageError  # noqa: PLC0415 - Pillow

    Image.MAX_IMAGE_PIXELS = settings.MAX_IMAGE_PIXELS
    limit = settings.MAX_IMAGE_PIXELS
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(path, formats=list(ALLOWED_FORMATS)) as img:
                width, height = img.size
                if width * height > limit:
                    raise HostileInput(_bomb_message(width, height, limit))
                frames = int(getattr(img, "n_frames", 1))
                img.seek(0)
                img.load()
                orientation = img.getexif().get(0x0112, 1)
                oriented = orientation not in (1, None) and orientation in range(2, 9)
                image = ImageOps.exif_transpose(img) if oriented else img.copy()
                fields = exif_fields(img)
                fmt, mode = str(img.format), img.mode
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise HostileInput(
                f"this image is too large to decode safely ({exc}); the limit is "
                f"{limit} pixels (MAX_IMAGE_PIXELS)"
            ) from exc
        except UnidentifiedImageError as exc:
            raise InvalidInput(
                "this file is not a readable image (PNG, JPEG, GIF, WEBP, BMP or TIFF expected)"
            ) from exc
        except (ValueError, OSError, SyntaxError, EOFError, IndexError) as exc:
            raise InvalidInput(
                f"this image could not be decoded: it looks truncated or corrupt ({exc})"
            ) from exc
    return _Decoded(image, fmt, mode, width, height, frames, oriented, fields)


def _bomb_message(width: int, height: int, limit: int) -> str:
    return (
        f"this image declares {width}×{height} = {width * height} pixels, over the limit of "
        f"{limit} (MAX_IMAGE_PIXELS); it looks like a decompression bomb"
    )


def _encode(image: Any, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        if image.mode not in ("L", "RGB", "CMYK"):
            image = image.convert("RGB")
        image.save(out, format="JPEG", quality=85, optimize=True)
    elif fmt == "WEBP":
        image.save(out, format="WEBP", quality=85)
    elif fmt == "GIF":
        image.save(out, format="GIF")
    else:
        image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _resizable(image: Any) -> Any:
    """A mode LANCZOS works on (palette and 16-bit images are converted first)."""
    if image.mode in ("L", "LA", "RGB", "RGBA"):
        return image
    has_alpha = "A" in image.mode or "transparency" in image.info
    return image.convert("RGBA" if has_alpha else "RGB")


def _resize(image: Any, width: int, height: int) -> Any:
    from PIL import Image  # noqa: PLC0415

    return _resizable(image).resize((max(1, width), max(1, height)), Image.Resampling.LANCZOS)


class ImageProcessor:
    name = "image"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "image"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        original = path.read_bytes()
        if not original:
            raise InvalidInput("the image file is empty (0 bytes)")
        work = _Work(_decode(path, ctx.settings), original)
        work.fit_dimension(ctx.settings.MAX_IMAGE_DIMENSION)
        work.encode()
        work.fit_bytes(ctx.settings.MAX_IMAGE_ATTACHMENT_SIZE)
        return work.result(info)


class _Work:
    """One image on its way to the model: the steps of `ImageProcessor.process`."""

    def __init__(self, decoded: _Decoded, original: bytes) -> None:
        self.decoded = decoded
        self.original = original
        self.image = decoded.image
        self.out_format = decoded.format if decoded.format in _KEEP_FORMAT else "PNG"
        self.upright = decoded.image.size
        self.notes: list[str] = []
        self.truncation = TruncationInfo()
        self.resized = False
        self.data = original
        if decoded.oriented:
            self.notes.append("EXIF orientation applied")
        if decoded.format != self.out_format:
            self.notes.append(f"converted from {decoded.format} to {self.out_format}")
        if decoded.frames > 1:
            self.notes.append(f"animated: kept the first frame of {decoded.frames}")
            self.truncation.count("frames dropped", decoded.frames - 1)

    def fit_dimension(self, cap: int | None) -> None:
        """The dimension strategy (when configured) comes before the byte-size one."""
        width, height = self.upright
        if cap is not None and max(width, height) > cap:
            scale = cap / max(width, height)
            self.image = _resize(self.image, round(width * scale), round(height * scale))
            self.resized = True
            self.notes.append(f"longest side limited to {cap} px (MAX_IMAGE_DIMENSION)")

    def encode(self) -> None:
        """Re-encode what changed (encoding writes no metadata); else strip it losslessly."""
        d = self.decoded
        changed = self.resized or d.oriented or d.format != self.out_format or d.frames > 1
        stripped = False
        if changed:
            self.data = _encode(self.image, self.out_format)
        else:
            self.data, stripped = strip_metadata(self.original, self.out_format)
            if not stripped and d.exif:  # an odd layout: re-encode to be rid of it
                self.data, stripped = _encode(self.image, self.out_format), True
        if d.exif or stripped:
            gps = "with the GPS location " if d.exif.get("had_gps_location") else ""
            self.notes.append(f"metadata (EXIF, XMP) {gps}removed from the image sent")

    def fit_bytes(self, limit: int) -> None:
        if len(self.data) <= limit:
            return
        before = self.image.size
        self.image, self.data = _shrink_to_bytes(self.image, self.data, self.out_format, limit)
        if self.image.size != before:
            self.resized = True
            self.notes.append(f"resized to fit {human_bytes(limit)} (MAX_IMAGE_ATTACHMENT_SIZE)")
        else:
            self.notes.append(f"re-encoded to fit {human_bytes(limit)} (MAX_IMAGE_ATTACHMENT_SIZE)")

    def result(self, info: StreamInfo) -> FileExtractionResult:
        (w0, h0), (w1, h1) = self.upright, self.image.size
        if self.resized:
            self.truncation.record("pixels", w1 * h1, w0 * h0)
        before, after = estimate_tokens(w0, h0), estimate_tokens(w1, h1)
        content = _describe(
            self.decoded,
            w0=w0,
            h0=h0,
            b0=len(self.original),
            w1=w1,
            h1=h1,
            b1=len(self.data),
            fmt=self.out_format,
            notes=self.notes,
            tokens_after=after,
        )
        return FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category="image",
            media_type=info.media_type,
            content=content,
            binary=self.data,
            binary_media_type=_MEDIA_TYPES[self.out_format],
            truncation=self.truncation,
            metadata=self._metadata(before, after),
            token_count=before["openai_high"],
            processed_token_count=after["openai_high"],
        )

    def _metadata(self, before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
        d = self.decoded
        width, height = self.image.size
        metadata: dict[str, Any] = {
            "format": d.format,
            "output_format": self.out_format,
            "mode": d.mode,
            "original_width": d.width,
            "original_height": d.height,
            "original_bytes": len(self.original),
            "width": width,
            "height": height,
            "bytes": len(self.data),
            "resized": self.resized,
            "orientation_applied": d.oriented,
            "frames": d.frames,
            "token_estimates": after,
            "original_token_estimates": before,
            "token_formula": ESTIMATE_FORMULAS,
            "token_count_basis": "openai_high",
        }
        if d.exif:
            metadata["exif"] = d.exif
        return metadata


def _shrink_to_bytes(image: Any, data: bytes, fmt: str, limit: int) -> tuple[Any, bytes]:
    """Scale by √(limit / size) with LANCZOS, from the same source each round, until under.

    Re-encoding changes the bytes per pixel (a JPEG saved at another quality), so a
    result far under the limit gets one more step back up; the largest fit wins.
    """
    source = image
    width, height = source.size
    factor, size = 1.0, len(data)
    best: tuple[Any, bytes] | None = None
    for _ in range(_MAX_RESIZE_ROUNDS):
        factor = min(1.0, factor * math.sqrt(limit / size) * 0.98)
        new_w, new_h = max(1, int(width * factor)), max(1, int(height * factor))
        image = _resize(source, new_w, new_h)
        data = _encode(image, fmt)
        size = len(data)
        if size <= limit:
            if best is None or size > len(best[1]):
                best = (image, data)
            if size >= limit * 0.6 or factor >= 1.0:
                break
        elif best is not None or (new_w == 1 and new_h == 1):
            break  # stepping back up overshot: keep the best fit found
    if best is None:
        raise InvalidInput(
            f"this image could not be brought under {human_bytes(limit)} "
            "(MAX_IMAGE_ATTACHMENT_SIZE) by resizing"
        )
    return best


def _describe(
    decoded: _Decoded,
    *,
    w0: int,
    h0: int,
    b0: int,
    w1: int,
    h1: int,
    b1: int,
    fmt: str,
    notes: list[str],
    tokens_after: dict[str, int],
) -> str:
    text = f"Image: {decoded.format}, {w0}×{h0} px, {human_bytes(b0)}, mode {decoded.mode}."
    if (w0, h0) != (w1, h1) or b0 != b1 or decoded.format != fmt:
        text += f" Sent as {fmt}, {w1}×{h1} px, {human_bytes(b1)}."
    if notes:
        joined = "; ".join(notes)
        text += " " + joined[:1].upper() + joined[1:] + "."
    text += (
        f" Estimated tokens: OpenAI high detail {tokens_after['openai_high']}, "
        f"OpenAI low detail {tokens_after['openai_low']}, Anthropic {tokens_after['anthropic']}."
    )
    return text + "\n"
