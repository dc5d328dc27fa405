"""Options of a hierarchical memory (seed 001), stored with the memory and validated.

- `max_working_memory` (10): actions the working memory holds at most;
- `max_context_tokens` (8000): tokens the rendered text (`get_context_for_agent`) is
  kept within; `token_utilisation` is its tokens ÷ this;
- `compression_threshold` (0.7, a ratio): compression runs when the working memory holds
  more than `compression_threshold * max_working_memory` actions (the compression limit);
- `recent_to_keep` (default: 5 as in seed 001, fewer when the compression limit is at most 5:
  one below it, at least 1): the newest actions a compression always keeps; the
  hierarchical strategy's `recent_actions` option. The older critical actions kept beside
  them fill the working memory up to `max_working_memory` at most (seed 001: "critical +
  recent, max 10 in all").

Defaults come from settings (`MEMORY_MAX_WORKING_MEMORY`, `MEMORY_MAX_CONTEXT_TOKENS`,
`MEMORY_COMPRESSION_THRESHOLD`) when given, else from the figures above.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from contextq.errors import ValidationFailed

if TYPE_CHECKING:
    from contextq.settings import Settings

MIN_WORKING_MEMORY, MAX_WORKING_MEMORY = 2, 10_000
MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS = 100, 2_000_000
SEED_RECENT_ACTIONS = 5  # seed 001 keeps the last 5 actions at every compression


@dataclass(frozen=True, slots=True)
class MemoryOptions:
    max_working_memory: int = 10
    max_context_tokens: int = 8000
    compression_threshold: float = 0.7
    recent_to_keep: int | None = None

    @property
    def compression_limit(self) -> int:
        """Working-memory size above which compression runs (at least 1)."""
        return max(1, math.floor(self.compression_threshold * self.max_working_memory + 1e-9))

    @property
    def recent(self) -> int:
        """The newest actions a compression keeps."""
        if self.recent_to_keep is not None:
            return self.recent_to_keep
        return max(1, min(SEED_RECENT_ACTIONS, self.compression_limit - 1))

    @property
    def critical_cap(self) -> int:
        """Older critical actions a compression keeps: the newest ones, as many as leave
        the working memory at `max_working_memory` at most (seed 001)."""
        return max(0, self.max_working_memory - self.recent)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_working_memory": self.max_working_memory,
            "max_context_tokens": self.max_context_tokens,
            "compression_threshold": self.compression_threshold,
        }
        if self.recent_to_keep is not None:
            out["recent_to_keep"] = self.recent_to_keep
        return out

    @classmethod
    def defaults(cls, settings: Settings | None = None) -> MemoryOptions:
        if settings is None:
            return cls()
        return cls(
            max_working_memory=settings.MEMORY_MAX_WORKING_MEMORY,
            max_context_tokens=settings.MEMORY_MAX_CONTEXT_TOKENS,
            compression_threshold=settings.MEMORY_COMPRESSION_THRESHOLD,
        )

    @classmethod
    def parse(
        cls,
        given: Mapping[str, Any] | None = None,
        *,
        settings: Settings | None = None,
        base: MemoryOptions | None = None,
        field: str = "memory_options",
    ) -> MemoryOptions:
        """`given` (a conversation's `memory_options`) over `base` (else the settings'
        defaults); unknown keys, wrong types or out-of-range values raise ValidationFailed
        naming `field.<option>`."""
        options = base or cls.defaults(settings)
        if given is None:
            return options
        if not isinstance(given, Mapping):
            raise ValidationFailed(f"{field} must be a JSON object", field=field)
        changes: dict[str, Any] = {}
        for key, value in given.items():
            check = _CHECKS.get(key)
            if check is None:
                raise ValidationFailed(
                    f"unknown memory option {key!r} (allowed: {', '.join(_CHECKS)})",
                    field=f"{field}.{key}",
                )
            changes[key] = check(value, f"{field}.{key}")
        options = replace(options, **changes)
        if options.recent_to_keep is not None and options.recent_to_keep >= max(
            2, options.compression_limit
        ):
            raise ValidationFailed(
                f"recent_to_keep ({options.recent_to_keep}) must be below the compression limit"
                f" compression_threshold * max_working_memory ({options.compression_limit})",
                field=f"{field}.recent_to_keep",
            )
        return options


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed(f"{where} must be an integer", field=where)
    if not low <= value <= high:
        raise ValidationFailed(f"{where} must be between {low} and {high}", field=where)
    return value


def _working(value: Any, where: str) -> int:
    return _int(value, where, MIN_WORKING_MEMORY, MAX_WORKING_MEMORY)


def _tokens(value: Any, where: str) -> int:
    return _int(value, where, MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS)


def _recent(value: Any, where: str) -> int | None:
    return None if value is None else _int(value, where, 0, MAX_WORKING_MEMORY)


def _ratio(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValidationFailed(f"{where} must be a number", field=where)
    if not 0 < value <= 1:
        raise ValidationFailed(
            f"{where} is a ratio of max_working_memory: above 0 and at most 1 (got {value})",
            field=where,
        )
    return float(value)


_CHECKS = {
    "max_working_memory": _working,
    "max_context_tokens": _tokens,
    "compression_threshold": _ratio,
    "recent_to_keep": _recent,
}
