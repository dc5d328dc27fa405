"""Text and code: streamed, decoded safely, cut to MAX_LINES lines of MAX_LINE_LENGTH.

Decoding: a BOM (UTF-8, UTF-16, UTF-32) wins; else UTF-8 if the first 64 KiB
decode as UTF-8; else Windows-1252 when nearly all bytes are ASCII; else
charset-normalizer's guess if it decodes the sample (cp932, GBK, Big5, EUC-KR,
...); else latin-1, which never fails. Later undecodable
bytes become U+FFFD, which `pipeline.finalize` removes with control characters.

The file is read in byte-capped chunks, never by `readline()`, so a 1 GB
single-line file costs one chunk of memory. The exact token count of the
whole decoded text is taken on the way (`tokens.StreamingTokenCounter`).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path

from contextq import tokens
from contextq.files.formats import FENCE_LANGUAGE
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo

CHUNK_BYTES = 1 << 20
SAMPLE_BYTES = 64 * 1024

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _bom_or_utf16(sample: bytes) -> str | None:
    for bom, name in _BOMS:
        if sample.startswith(bom):
            return name
    if sample.count(b"\x00") / max(len(sample), 1) > 0.3:  # UTF-16 without a BOM?
        even_zeros = sample[0::2].count(0)
        odd_zeros = sample[1::2].count(0)
        if odd_zeros > even_zeros * 4:
            return "utf-16-le"
        if even_zeros > odd_zeros * 4:
            return "utf-16-be"
    return None


def sniff_encoding(sample: bytes) -> str:
    """The encoding to read a file with, judged on its first bytes. Never fails."""
    declared = _bom_or_utf16(sample)
    if declared:
        return declared
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.start >= len(sample) - 3:
            return "utf-8"  # the sample cut a character in two
    high = sum(1 for b in sample if b >= 0x80)
    if high * 10 < len(sample):
        # mostly ASCII with a few accented letters: detectors guess wildly on so little
        # evidence; Windows-1252 (a superset of latin-1's printable range) is the usual truth
        try:
            sample.decode("cp1252")
            return "cp1252"
        except UnicodeDecodeError:
            pass
    return detect_legacy_encoding(sample) or "latin-1"


def detect_legacy_encoding(sample: bytes) -> str | None:
    """The legacy encoding (cp932, GBK, Big5, EUC-KR, cp1251, ...) `sample` is text in, or None.

    charset-normalizer's best guess, kept only if it decodes the sample strictly (a
    character cut by the sample's end excepted) — so binary data is not called text.
    """
    from charset_normalizer import from_bytes  # noqa: PLC0415 - charset-normalizer

    best = from_bytes(sample[:SAMPLE_BYTES]).best()
    if best is None or not best.encoding:
        return None
    encoding = str(best.encoding)
    for cut in range(4):  # a multi-byte character cut in two by the sample
        try:
            sample[: len(sample) - cut].decode(encoding)
            return encoding
        except UnicodeDecodeError:
            continue
        except LookupError:
            return None
    return None


def read_sample(path: Path, size: int = SAMPLE_BYTES) -> bytes:
    with path.open("rb") as fh:
        return fh.read(size)


def file_tokens(path: Path, *, limit_bytes: int | None = None) -> tuple[int, int, bool]:
    """Exact tokens of the file's decoded text, streamed in bounded memory.

    With `limit_bytes`, only about the first `limit_bytes` bytes are counted.
    Returns (tokens, bytes_counted, whole_file_counted).
    """
    counter = tokens.StreamingTokenCounter()
    counted = 0
    for piece in iter_decoded(path, sniff_encoding(read_sample(path))):
        counter.feed(piece)
        counted += len(piece.encode("utf-8", "surrogatepass"))
        if limit_bytes is not None and counted >= limit_bytes:
            return counter.finish(), counted, False
    return counter.finish(), counted, True


def iter_decoded(path: Path, encoding: str, chunk_bytes: int = CHUNK_BYTES) -> Iterator[str]:
    """Decoded pieces of at most `chunk_bytes` bytes each (cleaned later, in finalize)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    with path.open("rb") as fh:
        while True:
            raw = fh.read(chunk_bytes)
            final = not raw
            piece = decoder.decode(raw, final=final)
            if piece:
                yield piece
            if final:
                return


class _LineCollector:
    """Keeps the first `max_lines` lines, each cut at `max_len` chars; counts the rest."""

    def __init__(self, max_lines: int, max_len: int) -> None:
        self.max_lines = max_lines
        self.max_len = max_len
        self.lines: list[str] = []
        self.total_lines = 0
        self.cut_lines = 0
        self.shown_chars_of_cut = 0
        self.total_chars_of_cut = 0
        self._current: list[str] = []
        self._current_kept = 0
        self._current_len = 0
        self._ends_cr = False
        self.total_chars = 0

    def feed(self, piece: str) -> None:
        self.total_chars += len(piece)
        start = 0
        while True:
            nl = piece.find("\n", start)
            if nl < 0:
                self._add(piece[start:])
                return
            self._add(piece[start:nl])
            self._end_line()
            start = nl + 1

    def _add(self, part: str) -> None:
        if not part:
            return
        self._ends_cr = part.endswith("\r")
        self._current_len += len(part)
        room = self.max_len - self._current_kept
        if room > 0 and len(self.lines) < self.max_lines:
            kept = part[:room]
            self._current.append(kept)
            self._current_kept += len(kept)

    def _end_line(self) -> None:
        line = "".join(self._current)
        length = self._current_len
        if self._ends_cr:  # CRLF: the CR is part of the line ending, not the line
            length -= 1
            line = line.removesuffix("\r")
            self._ends_cr = False
        self.total_lines += 1
        if len(self.lines) < self.max_lines:
            if length > self.max_len:
                self.cut_lines += 1
                self.shown_chars_of_cut += len(line)
                self.total_chars_of_cut += length
                line = f"{line} … ({length - len(line)} more chars)"
            self.lines.append(line)
        self._current = []
        self._current_kept = 0
        self._current_len = 0

    def finish(self) -> None:
        if self._current_len:
            self._end_line()


def _fence(lines: list[str]) -> str:
    longest = 0
    for line in lines:
        if "```" in line:
            run = 0
            for ch in line:
                run = run + 1 if ch == "`" else 0
                longest = max(longest, run)
    return "`" * max(3, longest + 1)


class TextProcessor:
    """Text and code (and the generic fallback for any textual file)."""

    name = "text"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category in ("text", "code")

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        settings = ctx.settings
        encoding = sniff_encoding(read_sample(path))
        lines = _LineCollector(settings.MAX_LINES, settings.MAX_LINE_LENGTH)
        counter = tokens.StreamingTokenCounter()
        for piece in iter_decoded(path, encoding):
            lines.feed(piece)
            counter.feed(piece)
        lines.finish()
        full_tokens = counter.finish()

        truncation = TruncationInfo()
        truncation.record("lines", len(lines.lines), lines.total_lines)
        truncation.record("line_chars", lines.shown_chars_of_cut, lines.total_chars_of_cut)
        if lines.cut_lines:
            truncation.count(f"lines cut at {settings.MAX_LINE_LENGTH} chars", lines.cut_lines)

        body = "\n".join(lines.lines)
        metadata: dict[str, object] = {
            "encoding": encoding,
            "lines": lines.total_lines,
            "chars": lines.total_chars,
        }
        if not counter.exact:
            metadata["token_count_exact"] = False
        if info.category == "code":
            language = FENCE_LANGUAGE.get(info.file_type, info.file_type)
            fence = _fence(lines.lines)
            body = f"{fence}{language}\n{body}\n{fence}"
            metadata["language"] = info.file_type
        return FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category=info.category,
            media_type=info.media_type,
            content=body,
            truncation=truncation,
            metadata=metadata,
            full_text_tokens=full_tokens,
        )
