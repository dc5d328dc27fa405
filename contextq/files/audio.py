"""Audio: metadata for every format; subsampled and cut with PyAV when over the limits.

mutagen reads the metadata first (it is pure Python, so hostile headers raise
instead of crashing); PyAV is the fallback for metadata and does the
subsampling: decode → mono → 16 kHz → cut to `MAX_AUDIO_DURATION_S` (and to
what fits `MAX_AUDIO_BYTES`) → MP3 (libmp3lame). PyAV always gets a file
object and an explicit demuxer, so FFmpeg never follows a playlist or a URL
found inside an upload. Offline only: no transcription.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import mutagen

from contextq.errors import InvalidInput
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo, human_bytes
from contextq.settings import Settings

TARGET_RATE = 16_000
TARGET_BITRATE = 32_000  # bits/s of the mono 16 kHz MP3 we produce
OUTPUT_MEDIA_TYPE = "audio/mpeg"
_DEMUXERS = {"mp3": "mp3", "wav": "wav", "m4a": "mp4", "flac": "flac", "ogg": "ogg", "opus": "ogg"}
_MUTAGEN_CODECS = {
    "MP3": "mp3",
    "FLAC": "flac",
    "OggFLAC": "flac",
    "OggOpus": "opus",
    "OggVorbis": "vorbis",
    "OggSpeex": "speex",
    "OggTheora": "theora",
    "WAVE": "pcm",
    "AIFF": "pcm",
    "MP4": "aac",
    "EasyMP4": "aac",
    "EasyMP3": "mp3",
}
_PICTURE_TAGS = ("apic", "covr", "metadata_block_picture", "pictures", "wm/picture")
_MAX_TAGS = 20
_MAX_TAG_CHARS = 200


@dataclass
class AudioInfo:
    duration_s: float
    sample_rate: int | None
    channels: int | None
    bitrate: int | None
    codec: str | None
    tags: dict[str, str] = field(default_factory=dict)
    source: str = "mutagen"

    def as_metadata(self) -> dict[str, Any]:
        return {
            "duration_s": round(self.duration_s, 3),
            "sample_rate": self.sample_rate,
            "channels": self.channels,
            "bitrate": self.bitrate,
            "codec": self.codec,
            "tags": dict(self.tags),
            "metadata_source": self.source,
        }


def read_with_mutagen(path: Path) -> AudioInfo:
    """Metadata via mutagen; raises ValueError when mutagen cannot read it (any cause)."""
    try:
        audio = mutagen.File(path, easy=True)
    except Exception as exc:  # mutagen raises many types on hostile input
        raise ValueError(f"mutagen: {type(exc).__name__}: {str(exc)[:200]}") from exc
    if audio is None or audio.info is None:
        raise ValueError("mutagen: not a recognised audio format")
    info = audio.info
    duration = float(getattr(info, "length", 0.0) or 0.0)
    kind = type(audio).__name__
    codec = getattr(info, "codec", None) or _MUTAGEN_CODECS.get(kind, kind.lower())
    rate = getattr(info, "sample_rate", None) or (48_000 if codec == "opus" else None)
    return AudioInfo(
        duration_s=duration,
        sample_rate=int(rate) if rate else None,
        channels=int(getattr(info, "channels", 0) or 0) or None,
        bitrate=int(getattr(info, "bitrate", 0) or 0) or None,
        codec=str(codec),
        tags=_tags(audio.tags),
    )


def _tags(tags: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    if not tags:
        return found
    try:
        items = list(tags.items())
    except Exception:  # tag containers differ per format
        return found
    for key, value in items:
        name = str(key)
        if name.lower().startswith(_PICTURE_TAGS):
            continue
        values = value if isinstance(value, list) else [value]
        text = "; ".join(str(v) for v in values if not isinstance(v, bytes | bytearray))
        text = "".join(ch for ch in text if ch.isprintable())
        if text:
            found[name[:64]] = text[:_MAX_TAG_CHARS]
        if len(found) >= _MAX_TAGS:
            break
    return found


def read_with_pyav(path: Path, file_type: str) -> AudioInfo:
    """Metadata via PyAV/FFmpeg; raises ValueError when it cannot read it."""
    import av  # noqa: PLC0415 - PyAV/FFmpeg, for audio files only

    try:
        with path.open("rb") as fh, _open_input(fh, file_type) as container:
            stream = _audio_stream(container)
            ctx = stream.codec_context
            duration = 0.0
            if stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / 1_000_000
            tags = {str(k)[:64]: str(v)[:_MAX_TAG_CHARS] for k, v in container.metadata.items()}
            return AudioInfo(
                duration_s=duration,
                sample_rate=ctx.sample_rate or None,
                channels=ctx.channels or None,
                bitrate=(container.bit_rate or ctx.bit_rate or None),
                codec=ctx.name,
                tags=dict(list(tags.items())[:_MAX_TAGS]),
                source="pyav",
            )
    except (av.FFmpegError, StopIteration, OSError, ValueError) as exc:
        raise ValueError(f"PyAV: {_reason(exc)}") from exc


def _reason(exc: BaseException) -> str:
    """The error without the server-side path FFmpeg puts in its messages."""
    text = getattr(exc, "strerror", None) or str(exc)
    return f"{type(exc).__name__}: {str(text)[:200]}"


def packet_seconds(path: Path, file_type: str) -> float:
    """Seconds of audio the packets really cover (demux only, no decoding)."""
    import av  # noqa: PLC0415

    try:
        with path.open("rb") as fh, _open_input(fh, file_type) as container:
            stream = _audio_stream(container)
            time_base = stream.time_base
            first: int | None = None
            end = 0
            for packet in container.demux(stream):
                if packet.pts is None or packet.size == 0:
                    continue
                first = packet.pts if first is None else min(first, packet.pts)
                end = max(end, packet.pts + (packet.duration or 0))
            if first is None or time_base is None:
                return 0.0
            return float((end - first) * time_base)
    except (av.FFmpegError, StopIteration, OSError, ValueError) as exc:
        raise InvalidInput(
            f"could not read the audio data of this {file_type} file: it looks corrupt "
            f"({_reason(exc)})"
        ) from exc


def _open_input(fh: BinaryIO, file_type: str) -> Any:
    """PyAV on a file object with the demuxer named: FFmpeg never opens URLs or playlists."""
    import av  # noqa: PLC0415

    return av.open(fh, "r", format=_DEMUXERS.get(file_type), metadata_errors="ignore")


def _audio_stream(container: Any) -> Any:
    for stream in container.streams.audio:
        return stream
    raise StopIteration("no audio stream")


@dataclass
class Subsampled:
    data: bytes
    kept_s: float


def subsample(path: Path, file_type: str, keep_s: float) -> Subsampled:
    """Decode, downmix to mono, resample to 16 kHz, cut after `keep_s`, encode MP3."""
    import av  # noqa: PLC0415

    limit = int(keep_s * TARGET_RATE)
    written = 0
    out = io.BytesIO()
    try:
        with (
            path.open("rb") as fh,
            _open_input(fh, file_type) as source,
            av.open(out, "w", format="mp3") as sink,
        ):
            stream = _audio_stream(source)
            target = sink.add_stream("libmp3lame", rate=TARGET_RATE, layout="mono")
            target.bit_rate = TARGET_BITRATE
            resampler = av.AudioResampler(format="s16p", layout="mono", rate=TARGET_RATE)
            done = False
            for frame in source.decode(stream):
                frame.pts = None
                for chunk in resampler.resample(frame):
                    written, done = _write(sink, target, chunk, written, limit)
                    if done:
                        break
                if done:
                    break
            if not done:
                for chunk in resampler.resample(None):
                    written, done = _write(sink, target, chunk, written, limit)
                    if done:
                        break
            for packet in target.encode(None):
                sink.mux(packet)
    except (av.FFmpegError, StopIteration, OSError, ValueError) as exc:
        raise InvalidInput(
            f"could not decode this {file_type} audio: it looks truncated or corrupt "
            f"({_reason(exc)})"
        ) from exc
    if written == 0:
        raise InvalidInput(f"could not decode this {file_type} audio: it holds no audio samples")
    return Subsampled(out.getvalue(), written / TARGET_RATE)


def _write(sink: Any, target: Any, chunk: Any, written: int, limit: int) -> tuple[int, bool]:
    import av  # noqa: PLC0415

    room = limit - written
    if room <= 0:
        return written, True
    if chunk.samples > room:
        array = chunk.to_ndarray()[:, :room]
        chunk = av.AudioFrame.from_ndarray(array, format=chunk.format.name, layout="mono")
        chunk.sample_rate = TARGET_RATE
    chunk.pts = written
    for packet in target.encode(chunk):
        sink.mux(packet)
    written += chunk.samples
    return written, written >= limit


class AudioProcessor:
    name = "audio"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "audio"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        settings = ctx.settings
        size = path.stat().st_size
        if size == 0:
            raise InvalidInput("the audio file is empty (0 bytes)")
        meta = _read_metadata(path, info.file_type)
        _check_complete(path, info.file_type, meta)
        truncation = TruncationInfo()
        metadata = meta.as_metadata() | {"bytes": size, "subsampled": False}
        over = size > settings.MAX_AUDIO_BYTES or meta.duration_s > settings.MAX_AUDIO_DURATION_S
        summary = ""
        if over:
            result = _subsample_within(path, info.file_type, meta.duration_s, settings)
            binary, media_type = result.data, OUTPUT_MEDIA_TYPE
            if result.kept_s < meta.duration_s - 0.05:
                truncation.record("seconds", round(result.kept_s, 1), round(meta.duration_s, 1))
            metadata |= {
                "subsampled": True,
                "kept_s": round(result.kept_s, 3),
                "new_sample_rate": TARGET_RATE,
                "new_channels": 1,
                "new_bytes": len(binary),
                "new_codec": "mp3",
                "new_bitrate": TARGET_BITRATE,
            }
            summary = (
                "Subsampled for the limits (MAX_AUDIO_BYTES "
                f"{human_bytes(settings.MAX_AUDIO_BYTES)}, "
                f"MAX_AUDIO_DURATION_S {settings.MAX_AUDIO_DURATION_S:g} s): mono, "
                f"{TARGET_RATE} Hz, MP3 {TARGET_BITRATE // 1000} kbps; kept "
                f"{result.kept_s:.1f} s of {meta.duration_s:.1f} s, {human_bytes(len(binary))} "
                f"of {human_bytes(size)}."
            )
        else:
            binary, media_type = path.read_bytes(), info.media_type
        return FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category="audio",
            media_type=info.media_type,
            content=_describe(info, meta, size, summary),
            binary=binary,
            binary_media_type=media_type,
            truncation=truncation,
            metadata=metadata,
        )


def _read_metadata(path: Path, file_type: str) -> AudioInfo:
    errors: list[str] = []
    for reader in (read_with_mutagen, lambda p: read_with_pyav(p, file_type)):
        try:
            meta = reader(path)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        if meta.duration_s > 0 and math.isfinite(meta.duration_s):
            return meta
        errors.append(f"{meta.source}: no audio duration found")
    raise InvalidInput(
        f"could not read audio from this {file_type} file: it looks corrupt, truncated or not "
        f"really {file_type} ({'; '.join(errors)})"
    )


def _check_complete(path: Path, file_type: str, meta: AudioInfo) -> None:
    """Refuse files whose audio data stops well before the duration their header declares."""
    actual = packet_seconds(path, file_type)
    if actual <= 0:
        raise InvalidInput(f"this {file_type} file holds no audio data (header only)")
    if actual < meta.duration_s * 0.9 - 0.25:
        raise InvalidInput(
            f"this {file_type} file is truncated: its header declares {meta.duration_s:.1f} s "
            f"but the audio data stops after {actual:.1f} s; upload the complete file"
        )


def _subsample_within(
    path: Path, file_type: str, duration_s: float, settings: Settings
) -> Subsampled:
    """Subsample, cutting shorter when the MP3 still exceeds MAX_AUDIO_BYTES."""
    by_bytes = settings.MAX_AUDIO_BYTES * 8 / TARGET_BITRATE * 0.95
    keep_s = min(duration_s, settings.MAX_AUDIO_DURATION_S, by_bytes)
    for _ in range(4):
        result = subsample(path, file_type, max(keep_s, 0.05))
        if len(result.data) <= settings.MAX_AUDIO_BYTES:
            return result
        keep_s = result.kept_s * settings.MAX_AUDIO_BYTES / len(result.data) * 0.9
    raise InvalidInput(
        f"could not bring this audio under {human_bytes(settings.MAX_AUDIO_BYTES)} "
        "(MAX_AUDIO_BYTES)"
    )


def _describe(info: StreamInfo, meta: AudioInfo, size: int, summary: str) -> str:
    parts = [f"Audio: {info.file_type.upper()}, {meta.duration_s:.1f} s"]
    if meta.sample_rate:
        parts.append(f"{meta.sample_rate} Hz")
    if meta.channels:
        parts.append(f"{meta.channels} channel{'s' if meta.channels != 1 else ''}")
    if meta.bitrate:
        parts.append(f"{meta.bitrate // 1000} kbps")
    if meta.codec:
        parts.append(f"codec {meta.codec}")
    parts.append(human_bytes(size))
    text = ", ".join(parts) + "."
    if meta.tags:
        text += " Tags: " + "; ".join(f"{k}={v}" for k, v in meta.tags.items()) + "."
    if summary:
        text += " " + summary
    return text + " No transcript (offline processing only).\n"
