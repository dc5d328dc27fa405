"""Attached files as the service hands them to the engine (`FileView`): documents,
images and audio made by real libraries (Pillow, the stdlib's `wave`), and files that
are still processing, failed or deleted since they were attached.
"""

from __future__ import annotations

import base64
import io
import random
import wave
from functools import lru_cache

from PIL import Image

from contextq.assembly import FileView
from tests.engine.assembly.harness.text import sized_tokens, text_of

IMAGE_SIZES = ((48, 48), (300, 200), (800, 600), (1024, 1024), (2048, 1536))
AUDIO_SECONDS = (0.5, 2.0, 4.0)
AUDIO_RATE = 8000
DOCUMENT_KINDS = (
    ("text", "markdown", ".md"),
    ("pdf", "pdf", ".pdf"),
    ("spreadsheet", "csv", ".csv"),
    ("code", "python", ".py"),
)


@lru_cache(maxsize=32)
def image_b64(size: tuple[int, int], fmt: str = "PNG") -> str:
    out = io.BytesIO()
    Image.new("RGB", size, (30, 120, 200)).save(out, format=fmt)
    return base64.b64encode(out.getvalue()).decode("ascii")


@lru_cache(maxsize=8)
def wav_b64(seconds: float) -> str:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(AUDIO_RATE)
        w.writeframes(bytes(128 for _ in range(int(seconds * AUDIO_RATE))))
    return base64.b64encode(out.getvalue()).decode("ascii")


def wav_seconds(data_b64: str) -> float:
    """The duration of a base64 WAV (what an independent count of an audio part needs)."""
    with wave.open(io.BytesIO(base64.b64decode(data_b64)), "rb") as w:
        return w.getnframes() / w.getframerate()


def make_file(rng: random.Random, file_id: str, *, max_tokens: int, audio: bool) -> FileView:
    """A file of a random kind and status; `max_tokens` bounds a document's text."""
    roll = rng.random()
    name = f"{file_id}-{rng.choice(('notes', 'report', 'data', 'shot', 'clip'))}"
    if roll < 0.06:
        return FileView(file_id, rng.choice(("uploaded", "processing")), filename=name)
    if roll < 0.10:
        return FileView(file_id, "failed", filename=name, error="the PDF is encrypted")
    if roll < 0.13:
        return FileView(file_id, "missing")
    if roll < 0.30:
        return _image(rng, file_id, name)
    if audio and roll < 0.38:
        return _audio(rng, file_id, name)
    return _document(rng, file_id, name, max_tokens)


def _document(rng: random.Random, file_id: str, name: str, max_tokens: int) -> FileView:
    category, file_type, ext = rng.choice(DOCUMENT_KINDS)
    kind = "code" if category == "code" else "json" if category == "spreadsheet" else "prose"
    tokens = sized_tokens(rng, max(8, max_tokens))
    cut = rng.random() < 0.3
    return FileView(
        file_id,
        "ready",
        filename=name + ext,
        category=category,
        file_type=file_type,
        text=text_of(rng, tokens, kind),
        truncation_summary="lines 200 of 365" if cut else None,
        metadata={"pages": rng.randrange(1, 40)} if category == "pdf" else {},
    )


def _image(rng: random.Random, file_id: str, name: str) -> FileView:
    size = rng.choice(IMAGE_SIZES)
    fmt, media = rng.choice((("PNG", "image/png"), ("PNG", "image/png"), ("JPEG", "image/jpeg")))
    return FileView(
        file_id,
        "ready",
        filename=name + "." + fmt.lower(),
        category="image",
        file_type=fmt.lower(),
        text=f"Image: {fmt}, {size[0]}x{size[1]}.",
        metadata={"width": size[0], "height": size[1]},
        data_b64=image_b64(size, fmt),
        media_type=media,
    )


def _audio(rng: random.Random, file_id: str, name: str) -> FileView:
    seconds = rng.choice(AUDIO_SECONDS)
    return FileView(
        file_id,
        "ready",
        filename=name + ".wav",
        category="audio",
        file_type="wav",
        text=f"Audio: WAV, {seconds} s.",
        metadata={"duration_s": seconds},
        data_b64=wav_b64(seconds),
        media_type="audio/wav",
    )
