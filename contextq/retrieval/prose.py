"""Prose: consecutive sections of one page or sheet, split by semantic-text-splitter.

`semantic_text_splitter.MarkdownSplitter` (Rust) splits at the highest semantic level that
fits — headings, then blocks (paragraphs, lists, tables, code), then lines, sentences,
words — and merges neighbours up to the capacity. Two things are done around it:

- Sizing. A token callback costs a call per candidate (≈ 110 ms for a 300-page PDF);
  characters cost ≈ 4 ms. So the capacity is given in characters, calibrated from the
  characters per token measured on the previous run of the same file (or a sample of the
  first), and every piece is then counted exactly (bpe-openai). The rare piece over
  `OVERSIZE_FACTOR` times the target (the density changed: code after prose, CJK after
  Latin) is split again by the exact token-sized splitter.
- Overlap. The library overlaps only by whole units of the level it split at, so text cut
  between paragraphs or lines longer than the overlap gets none. Each piece after the first
  is instead extended back into the previous one by about `overlap` tokens, starting at a
  sentence start if there is one in that stretch, else at a word start.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from semantic_text_splitter import MarkdownSplitter

from contextq import tokens
from contextq.files.sections import Section
from contextq.retrieval.types import Piece

OVERSIZE_FACTOR = 1.25
SMALL_DIVISOR = 8  # a piece under capacity / 8 tokens is joined to a neighbour
CALIBRATION_CHARS = 8192
JOINER = "\n\n"  # between the sections of one run (a paragraph break for the splitter)

_SENTENCE_START = re.compile(r"(?<=[.!?;:]\s)\S|(?<=\n)\S")
_WORD_START = re.compile(r"(?<=\s)\S")


@functools.lru_cache(maxsize=64)
def _char_splitter(capacity: int) -> MarkdownSplitter:
    return MarkdownSplitter(capacity)


@functools.lru_cache(maxsize=16)
def _token_splitter(capacity: int, encoding: str) -> MarkdownSplitter:
    counter = functools.partial(tokens.count_tokens_fast, encoding=encoding)
    return MarkdownSplitter.from_callback(counter, capacity)


@dataclass
class Calibration:
    """Characters per token of the text seen last (one per file being chunked)."""

    ratio: float | None = None

    def chars_per_token(self, text: str, encoding: str) -> float:
        if self.ratio is None:
            sample = text[:CALIBRATION_CHARS]
            self.ratio = len(sample) / max(1, tokens.count_tokens_fast(sample, encoding))
        return self.ratio

    def update(self, pieces: Sequence[tuple[int, str, int]]) -> None:
        chars = sum(len(p[1]) for p in pieces)
        counted = sum(p[2] for p in pieces)
        if counted >= 100:
            self.ratio = chars / counted


def _quantize(chars: float) -> int:
    """Round to a multiple of 16 so that few distinct splitters are ever built."""
    return max(16, round(chars / 16.0) * 16)


def _overlap_start(text: str, start: int, floor: int, overlap_chars: int) -> int:
    """Where a piece starting at `start` begins once extended back by about
    `overlap_chars` (not before `floor`, the previous piece's start)."""
    lo = max(floor, start - overlap_chars)
    if lo >= start:
        return start
    for pattern in (_SENTENCE_START, _WORD_START):
        match = pattern.search(text, lo, start)
        if match is not None:
            return match.start()
    return lo if not any(c.isspace() for c in text[lo:start]) else start


def split_text(
    text: str,
    *,
    capacity: int,
    overlap: int,
    encoding: str,
    calibration: Calibration | None = None,
) -> list[tuple[int, str, int]]:
    """`(offset, piece, token_count)` for `text` cut into pieces of about `capacity` tokens
    (at most OVERSIZE_FACTOR times it), each overlapping the previous one by about
    `overlap` tokens; `offset` is the piece's first character in `text`."""
    calibration = calibration or Calibration()
    ratio = calibration.chars_per_token(text, encoding)
    splitter = _char_splitter(_quantize((capacity - overlap) * ratio))
    overlap_chars = int(overlap * ratio)
    limit = int(capacity * OVERSIZE_FACTOR)
    out: list[tuple[int, str, int]] = []
    previous = 0
    for index, (offset, body) in enumerate(splitter.chunk_indices(text)):
        start = _overlap_start(text, offset, previous, overlap_chars) if index else offset
        previous, end = offset, offset + len(body)
        piece = text[start:end]
        n = tokens.count_tokens_fast(piece, encoding)
        if n <= limit:
            out.append((start, piece, n))
            continue
        for sub_offset, sub in _token_splitter(capacity, encoding).chunk_indices(piece):
            out.append((start + sub_offset, sub, tokens.count_tokens_fast(sub, encoding)))
    out = _merge_small(text, out, small=capacity // SMALL_DIVISOR, limit=limit, encoding=encoding)
    calibration.update(out)
    return out


def _merge_small(
    text: str, pieces: list[tuple[int, str, int]], *, small: int, limit: int, encoding: str
) -> list[tuple[int, str, int]]:
    """Join a small piece to its neighbour when both fit in `limit`: the splitter leaves a
    heading alone when the section under it does not fit, and a run can end in a few words.
    A small piece joins the next one; a small last piece the previous."""

    def joined(a: tuple[int, str, int], b: tuple[int, str, int]) -> tuple[int, str, int] | None:
        span = text[a[0] : b[0] + len(b[1])]
        n = tokens.count_tokens_fast(span, encoding)
        return (a[0], span, n) if n <= limit else None

    out: list[tuple[int, str, int]] = []
    for piece in pieces:
        if out and out[-1][2] < small:
            merged = joined(out[-1], piece)
            if merged is not None:
                out[-1] = merged
                continue
        out.append(piece)
    if len(out) > 1 and out[-1][2] < small:
        merged = joined(out[-2], out[-1])
        if merged is not None:
            out[-2:] = [merged]
    return out


class _NewlineCursor:
    """Newlines in `text[:pos]`, for positions that mostly move forward (cost ∝ movement)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.count = 0

    def at(self, pos: int) -> int:
        if pos >= self.pos:
            self.count += self.text.count("\n", self.pos, pos)
        else:
            self.count -= self.text.count("\n", pos, self.pos)
        self.pos = pos
        return self.count


class _Run:
    """The joined text of a run of sections and the map from its offsets back to them."""

    def __init__(self, parts: Sequence[Section]) -> None:
        self.parts = parts
        self.text = JOINER.join(p.text for p in parts)
        self.starts: list[int] = []
        self.newlines_before: list[int] = []
        offset = newlines = 0
        for part in parts:
            self.starts.append(offset)
            self.newlines_before.append(newlines)
            offset += len(part.text) + len(JOINER)
            newlines += part.text.count("\n") + JOINER.count("\n")
        self._first = _NewlineCursor(self.text)
        self._last = _NewlineCursor(self.text)

    def _line(self, cursor: _NewlineCursor, pos: int) -> tuple[Section, int | None]:
        i = bisect.bisect_right(self.starts, pos) - 1
        part = self.parts[i]
        if part.line_start is None:
            return part, None
        line = part.line_start + cursor.at(pos) - self.newlines_before[i]
        if part.line_end is not None:
            line = min(line, part.line_end)
        return part, line

    def piece(self, offset: int, text: str, token_count: int) -> Piece:
        first, line_start = self._line(self._first, offset)
        _, line_end = self._line(self._last, offset + max(0, len(text) - 1))
        return Piece(
            text=text,
            token_count=token_count,
            page=first.page,
            sheet=first.sheet,
            line_start=line_start,
            line_end=line_end,
            heading=first.heading,
        )


def split_prose(
    parts: Sequence[Section],
    *,
    capacity: int,
    overlap: int,
    encoding: str,
    calibration: Calibration,
) -> Iterator[Piece]:
    """Pieces of a run of sections that share a page and a sheet, in text order."""
    run = _Run(parts)
    for offset, text, n in split_text(
        run.text, capacity=capacity, overlap=overlap, encoding=encoding, calibration=calibration
    ):
        yield run.piece(offset, text, n)
