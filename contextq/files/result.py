"""Result types of file processing: what was shown, what was left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Category = Literal[
    "text", "code", "tabular", "structured", "document", "image", "audio", "unsupported"
]

# Units in the order the summary names them.
UNITS = (
    "sheets",
    "rows",
    "columns",
    "cells",
    "lines",
    "line_chars",
    "items",
    "keys",
    "depth",
    "strings",
    "pages",
    "chars",
    "tokens",
    "pixels",
    "bytes",
    "seconds",
)


@dataclass
class TruncationInfo:
    """Shown vs total for each unit that was cut, plus counted notes.

    `summary` reads like `rows: 30 of 5000, columns: 50 of 100, 15 cells truncated`.
    """

    shown: dict[str, float] = field(default_factory=dict)
    total: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # e.g. {"cells truncated": 15}

    def record(self, unit: str, shown: float, total: float) -> None:
        """Record `shown of total` for `unit`; a no-op when nothing was cut."""
        if shown < total:
            self.shown[unit] = shown
            self.total[unit] = total

    def count(self, what: str, n: int = 1) -> None:
        """Count a kind of cut that has no total, e.g. `count("cells truncated")`."""
        if n > 0:
            self.counts[what] = self.counts.get(what, 0) + n

    @property
    def truncated(self) -> bool:
        return bool(self.shown or self.counts)

    @property
    def summary(self) -> str:
        parts: list[str] = []
        order = [u for u in UNITS if u in self.shown] + [u for u in self.shown if u not in UNITS]
        for unit in order:
            parts.append(f"{unit}: {_fmt(self.shown[unit])} of {_fmt(self.total[unit])}")
        parts.extend(f"{n} {what}" for what, n in self.counts.items())
        return ", ".join(parts)

    def merge(self, other: TruncationInfo) -> None:
        for unit, shown in other.shown.items():
            self.record(unit, shown, other.total[unit])
        for what, n in other.counts.items():
            self.count(what, n)

    def to_dict(self) -> dict[str, Any]:
        return {
            "truncated": self.truncated,
            "summary": self.summary,
            "shown": dict(self.shown),
            "total": dict(self.total),
            "counts": dict(self.counts),
        }


def human_bytes(n: float) -> str:
    """`512 bytes`, `1.5 MB`: sizes in the text results give the model and the user."""
    for unit in ("bytes", "KB", "MB"):
        if n < 1024:
            return f"{int(n)} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _fmt(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.1f}"
    return str(int(value))


@dataclass
class FileExtractionResult:
    """What a processor made of one file.

    `content` is the text/markdown that goes into context (after every cut).
    `binary` is a processed artefact (resized image, subsampled audio) with its
    `binary_media_type`; images and audio still carry a short text `content`
    describing them. `full_text_tokens` is the token count of the whole
    extracted text before any cut (the File object's `token_count`, docs/api.md#the-file-object).
    """

    success: bool
    file_type: str
    category: Category
    media_type: str
    content: str | None = None
    binary: bytes | None = None
    binary_media_type: str | None = None
    truncation: TruncationInfo = field(default_factory=TruncationInfo)
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    token_count: int | None = None
    processed_token_count: int | None = None
    cache_hit: bool = False
    # set by processors that already know the untruncated text's token count
    full_text_tokens: int | None = None
    # the whole extracted text as the processor holds it (documents: their conversion),
    # handed to indexing in the same process so the file is not read twice; never stored
    full_text: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def failure(
        cls,
        error: str,
        *,
        file_type: str = "unknown",
        category: Category = "unsupported",
        media_type: str = "application/octet-stream",
        metadata: dict[str, Any] | None = None,
    ) -> FileExtractionResult:
        return cls(
            success=False,
            file_type=file_type,
            category=category,
            media_type=media_type,
            error=error,
            metadata=metadata or {},
        )
