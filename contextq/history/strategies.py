"""History strategies (SPEC §4): plain functions over message lists, no I/O.

Each strategy takes the history (oldest first, with `token_count` precomputed) and
keyword-only options, and returns a `Selection`: the indices it keeps, ascending, so
the output is always a subsequence of the input. Every filtering strategy keeps:

- system messages;
- pinned messages (the newest `max_pinned` of them) with their whole tool chain;
- tool chains whole: an assistant message with `tool_calls` and its results stay or
  go together, so the output never starts with (or holds) an orphan tool result.

`token_budget` walks from the newest message backwards over the stored counts and
stops at the first unit that does not fit: its cost grows with what it keeps, not
with the history length (the only full pass is the anchor scan for system/pinned
messages, which the caller can skip by passing `anchors`).

`filter_history` is the entry point: it resolves the strategy (unknown → noop with a
warning), applies the threshold trigger / `force_filter` / `skip_filter`, computes
the budget and fails open (everything, logged) if a strategy raises.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from contextq.errors import ValidationFailed
from contextq.history.chains import Unit, unit_at
from contextq.history.tokens import token_count
from contextq.history.types import Message

if TYPE_CHECKING:
    from contextq.catalog import ModelLimits
    from contextq.history.memory import HierarchicalMemory
    from contextq.settings import Settings

log = logging.getLogger("contextq.history")

StrategyName = Literal["token_budget", "sliding_window", "noop", "hierarchical"]
STRATEGY_NAMES: tuple[str, ...] = get_args(StrategyName)
DEFAULT_STRATEGY: StrategyName = "token_budget"

DEFAULT_BUDGET_PERCENTAGE = 0.8
DEFAULT_RESERVE_TOKENS = 1000
DEFAULT_CONTEXT_THRESHOLD = 0.8
DEFAULT_WINDOW_SIZE = 20
CRITICAL_IMPORTANCE = 0.7
CRITICAL_SHARE = 0.25  # hierarchical: budget share kept for older critical messages
MEMORY_BLOCK_SHARE = 4  # the hierarchical memory block takes at most 1/4 of the budget


@dataclass(slots=True)
class Selection:
    """What a strategy keeps: indices into its input (ascending) and generated messages."""

    kept: list[int]
    preamble: list[Message] = field(default_factory=list)  # e.g. the hierarchical memory block


# ---------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class _Option:
    kind: type
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    nullable: bool = False


_BUDGET_OPTIONS: dict[str, _Option] = {
    "budget_percentage": _Option(float, 0.0, 1.0, exclusive_minimum=True),
    "reserve_tokens": _Option(int, 0),
    "max_output_tokens": _Option(int, 0, nullable=True),
    "tool_definition_tokens": _Option(int, 0),
    "min_messages_to_keep": _Option(int, 0),
}
_OPTIONS: dict[str, dict[str, _Option]] = {
    "token_budget": _BUDGET_OPTIONS,
    "sliding_window": {"window_size": _Option(int, 1)},
    "noop": {},
    "hierarchical": {
        **_BUDGET_OPTIONS,
        "compression_threshold": _Option(int, 2),
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
    if name == "hierarchical" and "compression_threshold" in clean:
        recent = clean.get("recent_actions", 5)
        if recent >= clean["compression_threshold"]:
            raise ValidationFailed(
                f"{field}.recent_actions ({recent}) must be below compression_threshold"
                f" ({clean['compression_threshold']})",
                field=f"{field}.recent_actions",
            )
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


def resolve_strategy(name: str | None) -> StrategyName:
    """A strategy name met at resolution time: None → default, unknown → noop + warning."""
    if name is None or name == "":
        return DEFAULT_STRATEGY
    if name in STRATEGY_NAMES:
        return cast(StrategyName, name)
    log.warning("unknown context strategy %r; falling back to noop", name)
    return "noop"


# ---------------------------------------------------------------- budget


@dataclass(frozen=True, slots=True)
class Budget:
    context_limit: int
    max_output_tokens: int  # room kept for the answer
    tool_definition_tokens: int
    budget_tokens: int  # what the whole context (system, summary, history) may use
    hard_limit_tokens: int  # context_limit - max_output - tools: beyond it the API refuses


def compute_budget(
    *,
    context_limit: int,
    model_max_output: int,
    max_output_tokens: int | None = None,
    tool_definition_tokens: int = 0,
    budget_percentage: float = DEFAULT_BUDGET_PERCENTAGE,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    max_input_tokens: int | None = None,
) -> Budget:
    """SPEC §4: (context_limit - max_output_tokens - tool_definition_tokens)
    * budget_percentage - reserve_tokens, where max_output_tokens is the model's max
    output capped at a quarter of the window unless given. A model with a separate
    input limit (gpt-5: 272K of 400K) never gets more than that."""
    if max_output_tokens is None:
        max_output_tokens = min(model_max_output, context_limit // 4)
    room = context_limit - max_output_tokens
    if max_input_tokens is not None:
        room = min(room, max_input_tokens)
    hard = max(0, room - tool_definition_tokens)
    budget = max(0, int(hard * budget_percentage) - reserve_tokens)
    return Budget(context_limit, max_output_tokens, tool_definition_tokens, budget, hard)


# ---------------------------------------------------------------- anchors


def find_anchors(messages: Sequence[Message]) -> list[int]:
    """Indices of system and pinned messages (one pass; the service may pass its own)."""
    return [i for i, m in enumerate(messages) if m.pinned or m.role == "system"]


def _anchor_units(
    messages: Sequence[Message], anchors: Sequence[int] | None, max_pinned: int
) -> dict[int, Unit]:
    if anchors is None:
        anchors = find_anchors(messages)
    units: dict[int, Unit] = {}
    pinned_left = max_pinned
    for i in reversed(anchors):  # the newest pinned messages win
        message = messages[i]
        if message.role != "system":
            if not message.pinned or pinned_left <= 0:
                continue
            pinned_left -= 1
        unit = unit_at(messages, i)
        if unit.members:
            units[unit.start] = unit
    return units


def _cost(messages: Sequence[Message], unit: Unit) -> int:
    total = 0
    for i in unit.members:
        message = messages[i]
        count = message.token_count
        total += token_count(message) if count is None else count
    return total


def _merge(anchor_units: Mapping[int, Unit], kept_units: list[Unit]) -> list[int]:
    starts = set(anchor_units)
    indices: list[int] = []
    for unit in anchor_units.values():
        indices.extend(unit.members)
    for unit in kept_units:
        if unit.start not in starts:
            indices.extend(unit.members)
    indices.sort()
    return indices


# ---------------------------------------------------------------- strategies


def noop(messages: Sequence[Message]) -> Selection:
    """Everything, as is."""
    return Selection(list(range(len(messages))))


def _units_newest_first(
    messages: Sequence[Message], anchor_units: Mapping[int, Unit]
) -> Iterator[Unit]:
    """Non-anchor units from the newest backwards; a tool chain is one unit. Lazy, so a
    walk that stops early never looks at older messages."""
    i = len(messages) - 1
    while i >= 0:
        unit = unit_at(messages, i)
        i = unit.start - 1
        if unit.start not in anchor_units and unit.members:
            yield unit


def _walk_budget(
    messages: Sequence[Message],
    anchor_units: Mapping[int, Unit],
    *,
    budget_tokens: int,
    hard_limit_tokens: int | None,
    min_messages_to_keep: int,
) -> list[Unit]:
    """The newest non-anchor units that fit next to the anchors (newest first)."""
    hard = budget_tokens if hard_limit_tokens is None else max(hard_limit_tokens, budget_tokens)
    used = sum(_cost(messages, u) for u in anchor_units.values())
    kept: list[Unit] = []
    kept_messages = 0
    newest = len(messages) - 1
    for unit in _units_newest_first(messages, anchor_units):
        cost = _cost(messages, unit)
        fits = used + cost <= budget_tokens
        needed = kept_messages < min_messages_to_keep and used + cost <= hard
        if not (fits or needed or unit.end == newest):
            break
        kept.append(unit)
        used += cost
        kept_messages += len(unit.members)
    return kept


def token_budget(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    hard_limit_tokens: int | None = None,
    min_messages_to_keep: int = 10,
    max_pinned: int = 10,
    anchors: Sequence[int] | None = None,
) -> Selection:
    """Keep system, pinned, then the newest units that fit `budget_tokens`.

    The newest `min_messages_to_keep` messages are kept even past the budget as long
    as the total stays within `hard_limit_tokens` ("where possible"); the newest unit
    is always kept. Stops at the first unit that does not fit (no gaps in the tail).
    """
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    kept = _walk_budget(
        messages,
        anchor_units,
        budget_tokens=budget_tokens,
        hard_limit_tokens=hard_limit_tokens,
        min_messages_to_keep=min_messages_to_keep,
    )
    return Selection(_merge(anchor_units, kept))


def sliding_window(
    messages: Sequence[Message],
    *,
    window_size: int = DEFAULT_WINDOW_SIZE,
    max_pinned: int = 10,
    anchors: Sequence[int] | None = None,
) -> Selection:
    """Keep system, pinned, and the newest `window_size` messages (chains whole: a
    chain that would cross the window edge is left out, unless it is the newest)."""
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    kept: list[Unit] = []
    count = 0
    newest = len(messages) - 1
    for unit in _units_newest_first(messages, anchor_units):
        # only the newest unit may exceed the window (a chain is never split)
        if count + len(unit.members) > window_size and unit.end != newest:
            break
        kept.append(unit)
        count += len(unit.members)
    return Selection(_merge(anchor_units, kept))


def hierarchical(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    hard_limit_tokens: int | None = None,
    min_messages_to_keep: int = 10,
    max_pinned: int = 10,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
    compression_threshold: int | None = None,
    recent_actions: int | None = None,
) -> Selection:
    """The memory block (GOAL / KEY DECISIONS / PREVIOUS ACTIONS / RECENT ACTIONS) as a
    preamble, the newest messages that fit the rest of the budget, then older critical
    messages (decisions, errors, importance > 0.7) while room is left."""
    from contextq.history.memory import HierarchicalMemory, score_message

    if memory is None:
        memory = HierarchicalMemory.from_messages(
            messages,
            compression_threshold=compression_threshold,
            recent_to_keep=recent_actions,
        )
    block = memory.render(max_tokens=max(0, budget_tokens // MEMORY_BLOCK_SHARE))
    preamble = [Message(role="user", content=block, kind=None)] if block else []
    block_tokens = sum(token_count(m) for m in preamble)
    room = max(0, budget_tokens - block_tokens)
    anchor_units = _anchor_units(messages, anchors, max_pinned)
    tail = _walk_budget(  # the recent tail first, leaving a share for older critical ones
        messages,
        anchor_units,
        budget_tokens=int(room * (1 - CRITICAL_SHARE)),
        hard_limit_tokens=None if hard_limit_tokens is None else hard_limit_tokens - block_tokens,
        min_messages_to_keep=min_messages_to_keep,
    )
    kept = set(_merge(anchor_units, tail))
    used = sum(token_count(messages[i]) for i in kept)
    tail_start = tail[-1].start if tail else len(messages)
    i = tail_start - 1
    while i >= 0:  # older critical messages, newest first, while they fit
        unit = unit_at(messages, i)
        i = unit.start - 1
        if not unit.members or unit.members[0] in kept:
            continue
        if max(score_message(messages[j]) for j in unit.members) <= CRITICAL_IMPORTANCE:
            continue
        cost = _cost(messages, unit)
        if used + cost <= room:
            kept.update(unit.members)
            used += cost
    i = tail_start - 1
    while i >= 0:  # then the tail grows back into what is left
        unit = unit_at(messages, i)
        i = unit.start - 1
        if not unit.members or unit.members[0] in kept:
            continue
        cost = _cost(messages, unit)
        if used + cost > room:
            break
        kept.update(unit.members)
        used += cost
    return Selection(sorted(kept), preamble)


# ---------------------------------------------------------------- filter_history


@dataclass(slots=True)
class FilterResult:
    """The history to send, with the facts of SPEC §2's context answer."""

    messages: list[Message]  # kept history: a subsequence of the input
    preamble: list[Message]  # generated messages to put before it (hierarchical memory)
    strategy: str  # strategy applied (after fallback)
    requested_strategy: str | None
    filtered: bool  # a strategy ran (threshold reached or forced)
    original_count: int
    kept_count: int
    removed_ids: list[str]
    original_tokens: int  # history tokens before
    kept_tokens: int  # history + preamble tokens after
    budget: Budget
    usage_before: float  # (fixed + history) ÷ context_limit
    usage_after: float
    duration_ms: float
    error: str | None = None  # set when filtering failed and everything was sent (fail-open)
    warnings: list[str] = field(default_factory=list)


StrategyFn = Callable[..., Selection]
STRATEGIES: dict[str, StrategyFn] = {
    "token_budget": token_budget,
    "sliding_window": sliding_window,
    "noop": noop,
    "hierarchical": hierarchical,
}


def filter_history(
    messages: Sequence[Message],
    *,
    limits: ModelLimits,
    settings: Settings,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    context_threshold: float = DEFAULT_CONTEXT_THRESHOLD,
    force_filter: bool = False,
    skip_filter: bool = False,
    fixed_tokens: int = 0,
    history_tokens: int | None = None,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
) -> FilterResult:
    """Apply a strategy to `messages` (oldest first) for the model in `limits`.

    - `strategy`: resolved at call time; unknown → noop with a warning.
    - `options`: validated (ValidationFailed names the option); for an unknown
      strategy they are ignored.
    - `fixed_tokens`: tokens that will go with the history (system prompt, summary);
      taken off the budget and counted in usage.
    - `history_tokens`: the stored running total of the whole history, if the caller
      has it (else summed); it sets usage_before and the threshold trigger, so a caller
      may pass only a window of the newest messages with the whole history's total.
    - Filtering runs when `force_filter`, or when usage ≥ `context_threshold` and
      `ENABLE_AUTO_COMPRESSION` is on; never with `skip_filter`.
    - Any exception inside a strategy → everything is returned (fail-open) and logged.
    """
    started = time.perf_counter()
    if force_filter and skip_filter:
        raise ValidationFailed(
            "force_filter and skip_filter exclude each other", field="skip_filter"
        )
    name = resolve_strategy(strategy)
    warnings: list[str] = []
    if name != (strategy or DEFAULT_STRATEGY):
        warnings.append(f"unknown strategy {strategy!r}; used noop")
        options = None
    opts = validate_options(name, options, field="options")
    budget = compute_budget(
        context_limit=limits.context_window,
        model_max_output=limits.max_output_tokens,
        max_output_tokens=opts.get("max_output_tokens"),
        tool_definition_tokens=opts.get("tool_definition_tokens", 0),
        budget_percentage=opts.get("budget_percentage", DEFAULT_BUDGET_PERCENTAGE),
        reserve_tokens=opts.get("reserve_tokens", DEFAULT_RESERVE_TOKENS),
        max_input_tokens=limits.max_input_tokens,
    )
    if history_tokens is None:
        history_tokens = sum(token_count(m, limits.model) for m in messages)
    limit = max(1, limits.context_window)
    usage_before = (fixed_tokens + history_tokens) / limit
    triggered = force_filter or (
        settings.ENABLE_AUTO_COMPRESSION and usage_before >= context_threshold
    )
    run = triggered and not skip_filter and name != "noop"

    error: str | None = None
    selection: Selection | None = None
    if run:
        try:
            selection = _run(
                name,
                messages,
                opts,
                budget,
                fixed_tokens=fixed_tokens,
                settings=settings,
                anchors=anchors,
                memory=memory,
            )
        except Exception as exc:  # fail-open: send everything, say why
            log.exception("context filtering with %s failed; sending the whole history", name)
            error = f"{type(exc).__name__}: {exc}"
            selection = None
    if selection is None:
        selection = noop(messages)
    kept_set = selection.kept
    kept = [messages[i] for i in kept_set]
    removed_ids = [] if len(kept) == len(messages) else _removed_ids(messages, kept_set)
    # summed from what is sent: `history_tokens` may describe more than `messages`
    # (a caller that read only a window of a long history passes the whole total)
    kept_tokens = sum(token_count(m) for m in kept)
    kept_tokens += sum(token_count(m) for m in selection.preamble)
    return FilterResult(
        messages=kept,
        preamble=selection.preamble,
        strategy=name,
        requested_strategy=strategy,
        filtered=run and error is None,
        original_count=len(messages),
        kept_count=len(kept),
        removed_ids=removed_ids,
        original_tokens=history_tokens,
        kept_tokens=kept_tokens,
        budget=budget,
        usage_before=round(usage_before, 4),
        usage_after=round((fixed_tokens + kept_tokens) / limit, 4),
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        error=error,
        warnings=warnings,
    )


def _removed_ids(messages: Sequence[Message], kept: list[int]) -> list[str]:
    """Ids of the messages between the kept ones (`kept` ascending), gap by gap."""
    removed: list[str] = []
    previous = -1
    for index in [*kept, len(messages)]:
        if index > previous + 1:
            removed.extend([m.id for m in messages[previous + 1 : index] if m.id is not None])
        previous = index
    return removed


def _run(
    name: StrategyName,
    messages: Sequence[Message],
    opts: Mapping[str, Any],
    budget: Budget,
    *,
    fixed_tokens: int,
    settings: Settings,
    anchors: Sequence[int] | None,
    memory: HierarchicalMemory | None,
) -> Selection:
    max_pinned = settings.MAX_PINNED_MESSAGES
    if name == "sliding_window":
        return sliding_window(
            messages,
            window_size=opts.get("window_size", DEFAULT_WINDOW_SIZE),
            max_pinned=max_pinned,
            anchors=anchors,
        )
    common: dict[str, Any] = {
        "budget_tokens": max(0, budget.budget_tokens - fixed_tokens),
        "hard_limit_tokens": max(0, budget.hard_limit_tokens - fixed_tokens),
        "min_messages_to_keep": opts.get("min_messages_to_keep", settings.MIN_MESSAGES_TO_KEEP),
        "max_pinned": max_pinned,
        "anchors": anchors,
    }
    if name == "hierarchical":
        return hierarchical(
            messages,
            memory=memory,
            compression_threshold=opts.get(
                "compression_threshold", settings.MEMORY_COMPRESSION_THRESHOLD
            ),
            recent_actions=opts.get("recent_actions"),
            **common,
        )
    return token_budget(messages, **common)
