"""Audio: metadata for every format, subsampling to mono 16 kHz MP3 when over the limits."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import pytest

from contextq.files import pipeline
from contextq.files.audio import AudioProcessor
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.settings import Settings
from tests.engine.files import media_samples as samples
from tests.engine.files.media_samples import SENTINEL

MEDIA = {
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "flac": "audio/flac",
    "ogg": "audio/ogg",
    "opus": "audio/opus",
    "m4a": "audio/mp4",
}
TITLE = f"Memo {SENTINEL}"


@dataclass(frozen=True)
class AudioVector:
    filename: str
    file_type: str
    make: Callable[[], bytes]
    duration_s: float
    sample_rate: int
    channels: int
    codec: str
    tagged: bool = True


VECTORS = [
    AudioVector(
        "memo.wav",
        "wav",
        lambda: samples.wav_bytes(2.0, rate=8000),
        2.0,
        8000,
        1,
        "pcm",
        tagged=False,
    ),
    AudioVector(
        "memo.mp3",
        "mp3",
        lambda: samples.encoded_audio_bytes("mp3", "libmp3lame", 2.0, title=TITLE),
        2.04,
        44100,
        2,
        "mp3",
    ),  # mutagen counts the encoder padding (2.0375 s)
    AudioVector(
        "memo.flac",
        "flac",
        lambda: samples.encoded_audio_bytes("flac", "flac", 2.0, title=TITLE),
        2.0,
        44100,
        2,
        "flac",
    ),
    AudioVector(
        "memo.opus",
        "opus",
        lambda: samples.encoded_audio_bytes("ogg", "libopus", 2.0, rate=48000, title=TITLE),
        2.0,
        48000,
        2,
        "opus",
    ),
    AudioVector(
        "memo.ogg",
        "ogg",
        lambda: samples.encoded_audio_bytes("ogg", "flac", 2.0, channels=1, title=TITLE),
        2.0,
        44100,
        1,
        "flac",
    ),
    AudioVector(
        "memo.m4a",
        "m4a",
        lambda: samples.encoded_audio_bytes("ipod", "aac", 2.0, title=TITLE),
        2.02,
        44100,
        2,
        "mp4a.40.2",
    ),
]


def run(tmp_path: Path, name: str, data: bytes, file_type: str, settings: Settings) -> Any:
    path = tmp_path / name
    path.write_bytes(data)
    info = StreamInfo(
        filename=name,
        extension=path.suffix,
        file_type=file_type,
        category="audio",
        media_type=MEDIA[file_type],
        size=len(data),
    )
    return AudioProcessor().process(path, info, ProcessContext(settings=settings))


def probe(data: bytes) -> tuple[float, int, int]:
    """(seconds decoded, sample rate, channels) of an encoded artefact, read back with PyAV."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        samples_n = sum(frame.samples for frame in container.decode(stream))
        ctx = stream.codec_context
        return samples_n / ctx.sample_rate, ctx.sample_rate, ctx.channels


@pytest.fixture
def settings() -> Settings:
    return Settings(ENVIRONMENT="test")


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.filename)
def test_metadata_of_every_format(vector: AudioVector, tmp_path: Path, settings: Settings) -> None:
    data = vector.make()
    result = run(tmp_path, vector.filename, data, vector.file_type, settings)
    assert result.success and result.category == "audio"
    meta = result.metadata
    assert meta["duration_s"] == pytest.approx(vector.duration_s, abs=0.02)
    assert meta["sample_rate"] == vector.sample_rate
    assert meta["channels"] == vector.channels
    assert meta["codec"] == vector.codec
    assert meta["subsampled"] is False and meta["bytes"] == len(data)
    assert result.binary == data and result.binary_media_type == MEDIA[vector.file_type]
    assert not result.truncation.truncated
    content = result.content or ""
    assert content.startswith(f"Audio: {vector.file_type.upper()}, {vector.duration_s:.1f} s")
    assert f"{vector.sample_rate} Hz" in content
    if vector.tagged:
        assert meta["tags"]["title"] == TITLE
        assert f"title={TITLE}" in content
    assert "No transcript" in content


def test_over_the_duration_limit_is_cut_and_subsampled(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_AUDIO_DURATION_S=1.0)
    data = samples.encoded_audio_bytes("mp3", "libmp3lame", 3.0, title=TITLE)
    result = run(tmp_path, "long.mp3", data, "mp3", settings)
    meta = result.metadata
    assert meta["subsampled"] is True
    assert meta["kept_s"] == pytest.approx(1.0, abs=0.001)
    assert (meta["new_sample_rate"], meta["new_channels"], meta["new_codec"]) == (16000, 1, "mp3")
    assert (meta["sample_rate"], meta["channels"]) == (44100, 2)  # the original's
    assert result.binary_media_type == "audio/mpeg" and meta["new_bytes"] == len(result.binary)
    seconds, rate, channels = probe(result.binary)
    assert (rate, channels) == (16000, 1)
    assert seconds == pytest.approx(1.0, abs=0.1)  # MP3 framing adds a little
    assert result.truncation.summary == "seconds: 1 of 3"
    assert "kept 1.0 s of 3.0 s" in (result.content or "")


def test_over_the_byte_limit_is_subsampled_within_it(tmp_path: Path) -> None:
    settings = Settings(ENVIRONMENT="test", MAX_AUDIO_BYTES=16_000)
    data = samples.wav_bytes(6.0, rate=16000)  # 192 KB of PCM
    result = run(tmp_path, "big.wav", data, "wav", settings)
    meta = result.metadata
    assert meta["subsampled"] is True
    assert len(result.binary) <= 16_000
    assert 3.0 < meta["kept_s"] < 6.0  # 32 kbit/s MP3: ~3.8 s fit in 16 KB
    assert result.truncation.summary == f"seconds: {round(meta['kept_s'], 1):g} of 6"
    _seconds, rate, channels = probe(result.binary)
    assert (rate, channels) == (16000, 1)


def test_process_file_reads_audio_end_to_end(tmp_path: Path, settings: Settings) -> None:
    data = samples.encoded_audio_bytes("flac", "flac", 1.0, title=TITLE)
    path = tmp_path / "upload"
    path.write_bytes(data)
    result = pipeline.process_file(
        path, "voice.flac", settings=settings, registry=samples.media_registry()
    )
    assert result.success, result.error
    assert (result.file_type, result.category) == ("flac", "audio")
    assert result.metadata["duration_s"] == 1.0
    assert TITLE in (result.content or "")
    assert result.token_count is not None and result.token_count > 10
    assert result.processed_token_count == result.token_count
