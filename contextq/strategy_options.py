"""Strategy names, their options and the defaults (docs/history.md#history-strategies), checked up
front.

A name or option written by a user (`POST`/`PATCH` conversation, a request's
`options`) is validated here and refused with `ValidationFailed` naming the field; a
name met at resolution time (a request's `strategy`, an old row) falls back to `noop`
with a logged warning (`resolve_strategy`).

The history engine's strategies take these options (`contextq.history` re-exports the
checks); the module sits below `contextq.settings`, which checks
`CONTEXT_DEFAULT_STRATEGY` and `CONTEXT_DEFAULT_OPTIONS` with it, so loading the settings
loads no strategy.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from contextq.errors import ValidationFailed

log = logging.getLogger("contextq.history")

StrategyName = Literal["token_budget", "sliding_window", "noop", "hierarchical"]
STRATEGY_NAMES: tuple[str, ...] = get_args(StrategyName)
DEFAULT_STRATEGY: StrategyName = "token_budget"

DEFAULT_BUDGET_PERCENTAGE = 0.8
DEFAULT_RESERVE_TOKENS = 1000
DEFAULT_CONTEXT_THRESHOLD = 0.8
DEFAULT_WINDOW_SIZE = 20
DEFAULT_TRIM_TO = 0.7  # token_budget cuts down to this share of the budget (hysteresis)
DEFAULT_PROJECT_SHARE = 0.5  # the project's documents take at most this share of what is left
# tool pairs kept whole when old results are cleared
# (docs/context.md#clearing-old-tool-results-with-hysteresis)
DEFAULT_KEEP_TOOL_RESULTS = 5
DEFAULT_MAX_PINNED = 10  # MAX_PINNED_MESSAGES' default: the newest this many pinned are kept


@dataclass(frozen=True, slots=True)
class _Option:
    kind: type
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    nullable: bool = False


_RATIO = _Option(float, 0.0, 1.0, exclusive_minimum=True)
_SHARE = _Option(float, 0.0, 1.0)
_BUDGET_OPTIONS: dict[str, _Option] = {
    "budget_percentage": _RATIO,
    "reserve_tokens": _Option(int, 0),
    "max_output_tokens": _Option(int, 0, nullable=True),
    "tool_definition_tokens": _Option(int, 0),
    "min_messages_to_keep": _Option(int, 0),
    "project_share": _SHARE,
    "keep_tool_results": _Option(int, 0),
}
_OPTIONS: dict[str, dict[str, _Option]] = {
    "token_budget": {**_BUDGET_OPTIONS, "trim_to": _RATIO},
    "sliding_window": {
        "window_size": _Option(int, 1),
        "min_messages_to_keep": _Option(int, 0),
        "project_share": _SHARE,
        "keep_tool_results": _Option(int, 0),
    },
    "noop": {"project_share": _SHARE},
    "hierarchical": {
        **_BUDGET_OPTIONS,
        "compression_threshold": _Option(float, 0.0, 1.0, exclusive_minimum=True),  # a ratio
        "recent_actions": _Option(int, 0),
    },
}


def validate_strategy(name: Any, *, field: str = "context_strategy") -> StrategyName:
    """A strategy name as written by a user: unknown → ValidationFailed naming `field`."""
    if name not in STRATEGY_NAMES:
        raise ValidationFailed(
            f"{field}: unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)}",
            field=field,
        )
    return cast(StrategyName, name)


def validate_options(
    strategy: str, options: Mapping[str, Any] | None, *, field: str = "context_options"
) -> dict[str, Any]:
    """Check `options` for `strategy` up front; returns a clean copy.

    Unknown keys, wrong types and out-of-range values raise ValidationFailed with
    `field` like `context_options.window_size`.
    """
    name = validate_strategy(strategy, field="context_strategy")
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValidationFailed("options must be a JSON object", field=field)
    allowed = _OPTIONS[name]
    clean: dict[str, Any] = {}
    for key, value in options.items():
        where = f"{field}.{key}"
        spec = allowed.get(key)
        if spec is None:
            choices = ", ".join(allowed) or "none"
            raise ValidationFailed(
                f"unknown option {key!r} for strategy {name} (allowed: {choices})", field=where
            )
        clean[key] = _check_option(value, spec, where)
    return clean


def _check_option(value: Any, spec: _Option, where: str) -> Any:
    if value is None:
        if spec.nullable:
            return None
        raise ValidationFailed(f"{where} must not be null", field=where)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationFailed(f"{where} must be a number", field=where)
    if spec.kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise ValidationFailed(f"{where} must be a whole number", field=where)
        value = int(value)
    else:
        value = float(value)
        if not math.isfinite(value):
            raise ValidationFailed(f"{where} must be finite", field=where)
    low, high = spec.minimum, spec.maximum
    if low is not None and (value <= low if spec.exclusive_minimum else value < low):
        relation = "above" if spec.exclusive_minimum else "at least"
        raise ValidationFailed(f"{where} must be {relation} {low:g}", field=where)
    if high is not None and value > high:
        raise ValidationFailed(f"{where} must be at most {high:g}", field=where)
    return value


def validate_threshold(value: Any, *, field: str = "context_threshold") -> float:
    spec = _Option(float, 0.0, 1.0, exclusive_minimum=True)
    return float(_check_option(value, spec, field))


def resolve_strategy(name: str | None, *, conversation_id: str | None = None) -> StrategyName:
    """A strategy name met at resolution time: None → default, unknown → noop + a
    warning naming the conversation (seed 002's resolution failure)."""
    if name is None or name == "":
        return DEFAULT_STRATEGY
    if name in STRATEGY_NAMES:
        return cast(StrategyName, name)
    log.warning(
        "unknown context strategy %r for conversation %s; falling back to noop",
        name,
        conversation_id or "(none)",
    )
    return "noop"
