"""The CSV byte scan: the exact record count csv.reader would give, at `bytes.count` speed.

`scan_records` steps through the file in 1 MiB chunks: a chunk without a quote
character is counted with `bytes.count`; in one with quotes, the quoted fields are
found by one regex (C speed, jumping from quote to quote) and the newlines inside them
subtracted. So a 1 GB file costs about one raw newline-counting pass. Escape
characters and lone CRs raise `FastScanUnsupported`: csv.reader must count those.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

SCAN_CHUNK_BYTES = 1 << 20


class FastScanUnsupported(Exception):
    """The byte scan cannot count this file exactly; csv.reader must."""


@dataclass
class ScanResult:
    records: int  # what csv.reader would yield, blank lines included
    trailing_blank: int  # blank records at the end of the file
    ends_in_quote: bool
    checkpoints: list[tuple[int, bool]]  # (chunk start offset, inside quotes there)


MAX_SCAN_CARRY = 32 << 20  # one quoted field this long: let csv.reader (and its limit) judge


@functools.cache
def _quoted_field(quote: bytes, delimiter: bytes) -> re.Pattern[bytes]:
    """A quoted field as csv.reader reads it: the quote opens only at a field start, `""`
    is an escaped quote, and a field still open at the end of the buffer runs to `\\Z`.
    The quote comes first so the regex engine can jump from quote to quote."""
    q, d = re.escape(quote), re.escape(delimiter)
    return re.compile(
        q
        + rb"(?<=["
        + d
        + rb"\r\n]"
        + q
        + rb")(?:[^"
        + q
        + rb"]+|"
        + q
        + q
        + rb")*(?:"
        + q
        + rb"|\Z)"
    )


def scan_records(path: Path, *, quote: bytes, delimiter: bytes) -> ScanResult:
    """Exact count of the records csv.reader would yield, in about one `bytes.count` pass.

    A record ends at a newline outside quotes. A chunk without a quote character
    is counted with `bytes.count`; in one with quotes, the quoted fields are found
    by one regex (C speed, jumping from quote to quote) and the newlines inside
    them subtracted. A field still open at a chunk's end is carried into the next.
    """
    newlines = 0
    prev = 0x0A  # a virtual newline before the file
    checkpoints: list[tuple[int, bool]] = []
    carry = b""
    offset = 0
    ends_in_quote = False
    trailing_newlines = 0  # newlines in the run of CR/LF that ends what was read so far
    content = False  # anything but line ends seen yet
    with path.open("rb") as fh:
        while True:
            raw = fh.read(SCAN_CHUNK_BYTES)
            buf = carry + raw if carry else raw
            if not buf:
                break
            eof = not raw
            # trailing quotes and CRs mean nothing until the next byte is known (`""`, CRLF)
            end = len(buf) if eof else len(buf.rstrip(quote + b"\r"))
            cut = end
            inside = 0
            if buf.find(quote, 0, end) >= 0:
                inside, open_at = _quoted_newlines(buf, end, prev, quote, delimiter, eof=eof)
                if open_at >= 0:
                    cut = open_at  # a field still open: carry it from its quote
            if cut:
                if buf.find(b"\r", 0, cut) >= 0:
                    _check_crlf(buf, cut)
                newlines += buf.count(b"\n", 0, cut) - inside
                checkpoints.append((offset, False))
                prev = buf[cut - 1]
                trailing_newlines, has_body = _trailing_newlines(buf, cut, trailing_newlines)
                content = content or has_body
            carry = buf[cut:]
            offset += cut
            if eof:
                ends_in_quote = bool(carry)
                break
            if len(carry) > MAX_SCAN_CARRY:
                raise FastScanUnsupported
    if prev == 0x0D:
        raise FastScanUnsupported  # the file ends in a lone CR
    records = newlines + (0 if prev == 0x0A else 1)
    # "a\n\n\n": the first newline ends a record, the other two are blank records
    trailing_blank = 0
    if prev == 0x0A:
        trailing_blank = trailing_newlines - 1 if content else trailing_newlines
    return ScanResult(records, trailing_blank, ends_in_quote, checkpoints)


def _trailing_newlines(buf: bytes, cut: int, before: int) -> tuple[int, bool]:
    """Newlines in the CR/LF run that ends `buf[:cut]`, and whether anything else
    precedes the run in this chunk (`before`: the run ending the previous chunk, which
    goes on if this chunk is nothing but line ends)."""
    window = buf[max(cut - 4096, 0) : cut]
    body = len(window.rstrip(b"\r\n"))
    if not body and cut > len(window):  # over 4096 line ends in a row (rare)
        window = buf[:cut]
        body = len(window.rstrip(b"\r\n"))
    if body:
        return window.count(b"\n", body), True
    return before + window.count(b"\n"), False


_LONE_CR = re.compile(rb"\r(?!\n)")


def _check_crlf(buf: bytes, cut: int) -> None:
    """Refuse lone CRs (csv.reader ends lines there too): the slow path counts them."""
    lone = _LONE_CR.search(buf, 0, cut)
    if lone and lone.start() != cut - 1:
        raise FastScanUnsupported


@functools.cache
def _quoted_field_at_start(quote: bytes) -> re.Pattern[bytes]:
    q = re.escape(quote)
    return re.compile(q + rb"(?:[^" + q + rb"]+|" + q + q + rb")*(?:" + q + rb"|\Z)")


def _quoted_newlines(
    buf: bytes, end: int, prev: int, quote: bytes, delimiter: bytes, *, eof: bool
) -> tuple[int, int]:
    """(newlines inside the quoted fields of `buf[:end]`, start of a field still open at
    `end` or -1). Steps from quote to quote with `bytes.find` (memchr speed); a quote at a
    field start (`prev` is the byte before `buf`) is matched to its close by one regex."""
    field = _quoted_field_at_start(quote)
    starts = (delimiter[0], 0x0A, 0x0D)
    inside = 0
    pos = buf.find(quote, 0, end)
    while pos >= 0:
        if (buf[pos - 1] if pos else prev) in starts:
            match = field.match(buf, pos, end)
            assert match is not None  # the pattern always matches at a quote
            if match.end() == end and not (eof and _closed(match.group(), quote[0])):
                return inside, pos
            inside += buf.count(b"\n", pos, match.end())
            pos = match.end()
        else:
            pos += 1  # a quote inside an unquoted field is a plain character
        pos = buf.find(quote, pos, end)
    return inside, -1


def quoted_spans(data: bytes, prev: int, quote: bytes, delimiter: bytes) -> list[tuple[int, int]]:
    """(start, end) of the quoted fields in `data` (which starts outside quotes)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    if data[:1] == quote and prev in (delimiter[0], 0x0A, 0x0D):
        match = _quoted_field_at_start(quote).match(data)
        if match:
            spans.append(match.span())
            pos = match.end()
    spans.extend(m.span() for m in _quoted_field(quote, delimiter).finditer(data, pos))
    return spans


def _closed(match: bytes, q: int) -> bool:
    """Whether a quoted-field match ends with its closing quote (an odd run of quotes)."""
    run = len(match) - len(match.rstrip(bytes([q])))
    if run == len(match):  # only quotes: the opening one does not close anything
        run -= 1
    return run % 2 == 1
