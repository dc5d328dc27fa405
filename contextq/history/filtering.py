"""Whether and how a strategy runs over a history (docs/history.md#history-strategies), decided
once.

`plan_filter(...)` resolves everything a filtering needs before any message is read:
the strategy (unknown → noop with a warning), its validated options, the budget, the
strategy's arguments and the trigger (usage ≥ threshold with `ENABLE_AUTO_COMPRESSION`,
or `force_filter`; never with `skip_filter`). `apply_filter(messages, plan)` runs it
and fails open (everything, logged) if a strategy raises. `filter_history(...)` does
both for a caller holding the whole history.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from contextq.errors import ValidationFailed
from contextq.history.budget import Budget, compute_budget
from contextq.history.memory_options import MemoryOptions
from contextq.history.message_tokens import token_count
from contextq.history.strategies import (
    Selection,
    hierarchical,
    noop,
    sliding_window,
    token_budget,
)
from contextq.history.types import Message
from contextq.strategy_options import (
    DEFAULT_BUDGET_PERCENTAGE,
    DEFAULT_KEEP_TOOL_RESULTS,
    DEFAULT_PROJECT_SHARE,
    DEFAULT_RESERVE_TOKENS,
    DEFAULT_TRIM_TO,
    DEFAULT_WINDOW_SIZE,
    StrategyName,
    resolve_strategy,
    validate_options,
)

if TYPE_CHECKING:
    from contextq.catalog import ModelLimits
    from contextq.history.memory import HierarchicalMemory
    from contextq.settings import Settings

log = logging.getLogger("contextq.history")


@dataclass(frozen=True, slots=True)
class FilterPlan:
    """A filtering decided up front: what runs, with which arguments, and when."""

    limits: ModelLimits
    strategy: StrategyName  # after fallback
    arguments: Mapping[str, Any]  # the strategy's keyword arguments (anchors/memory aside)
    budget: Budget
    fixed_tokens: int  # tokens that go with the history (system prompt, summary)
    history_tokens: int | None  # stored total of the history; None: summed when applied
    threshold: float
    forced: bool
    skipped: bool
    automatic: bool  # ENABLE_AUTO_COMPRESSION
    max_pinned: int  # MAX_PINNED_MESSAGES: the newest this many pinned are protected
    warnings: tuple[str, ...] = ()
    min_messages_to_keep: int = 0  # the strategy's minimum (noop and fail-open: none)
    window_size: int | None = None  # sliding_window's window; None for the others
    trim_to: float = DEFAULT_TRIM_TO  # token_budget: cut down to this share of the budget
    project_share: float = DEFAULT_PROJECT_SHARE  # P's share of what is left (docs/projects.md)
    # tool pairs never cleared (docs/context.md#clearing-old-tool-results-with-hysteresis)
    keep_tool_results: int = DEFAULT_KEEP_TOOL_RESULTS

    def usage(self, history_tokens: int) -> float:
        """(fixed + history tokens) ÷ context_limit; `history_tokens` is a stored (open
        encoding) total, counted at the largest factor for a closed tokenizer."""
        history = self.limits.counting.upper(history_tokens)
        return (self.fixed_tokens + history) / max(1, self.limits.context_window)

    def runs_at(self, history_tokens: int) -> bool:
        """Whether the strategy runs over a history of `history_tokens` stored tokens (the
        open encoding's: at the largest factor for a closed tokenizer, docs/token-counting.md)."""
        return self.runs_for_total(self.fixed_tokens + self.limits.counting.upper(history_tokens))

    def runs_for_total(self, context_tokens: int) -> bool:
        """Whether the strategy runs for an assembled context of `context_tokens` tokens
        (usage = context_tokens ÷ context_limit against the threshold, or forced)."""
        if self.skipped or self.strategy == "noop":
            return False
        usage = context_tokens / max(1, self.limits.context_window)
        return self.forced or (self.automatic and usage >= self.threshold)

    @property
    def runs(self) -> bool | None:
        """Whether the strategy will run: known from the stored total, or None when it
        depends on what is loaded (after a compaction, its covered pinned messages)."""
        if self.skipped or self.strategy == "noop":
            return False
        if self.forced:
            return True
        if self.history_tokens is None:
            return None if self.automatic else False
        return self.runs_at(self.history_tokens)

    def whole_history(self) -> FilterPlan:
        """The fail-open plan: the same budget and figures, nothing filtered."""
        return replace(
            self,
            strategy="noop",
            arguments=MappingProxyType({}),
            skipped=True,
            min_messages_to_keep=0,
            window_size=None,
        )


def plan_filter(
    *,
    limits: ModelLimits,
    settings: Settings,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    context_threshold: float | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    fixed_tokens: int = 0,
    history_tokens: int | None = None,
    tool_definition_tokens: int = 0,
    memory_options: Mapping[str, Any] | None = None,
    conversation_id: str | None = None,
) -> FilterPlan:
    """Resolve the strategy and options, the budget and the trigger.

    - `strategy`: None → `CONTEXT_DEFAULT_STRATEGY` (with `CONTEXT_DEFAULT_OPTIONS` when
      `options` is None); unknown → noop with a warning naming the conversation, and
      `options` are ignored; otherwise `options` are validated (ValidationFailed names
      `options.<key>`). `context_threshold` None → `CONTEXT_DEFAULT_THRESHOLD`.
    - `fixed_tokens`: tokens that go with the history; taken off the budget and
      counted in usage. `tool_definition_tokens`: the tools sent with the request
      (an explicit `tool_definition_tokens` option wins).
    - `history_tokens`: the stored running total of the whole history, if the caller
      has it (then only a window of its newest messages need be applied).
    - `memory_options`: the conversation's hierarchical memory options (hierarchical).
    """
    if force_filter and skip_filter:
        raise ValidationFailed(
            "force_filter and skip_filter exclude each other", field="skip_filter"
        )
    name, options, warnings = _resolve(strategy, options, settings, conversation_id)
    opts = validate_options(name, options, field="options")
    budget = _budget(limits, opts, tool_definition_tokens)
    arguments = _arguments(
        name,
        opts=opts,
        budget=budget,
        fixed_tokens=fixed_tokens,
        settings=settings,
        memory_options=memory_options,
    )
    threshold = settings.CONTEXT_DEFAULT_THRESHOLD
    if context_threshold is not None:
        threshold = context_threshold
    return FilterPlan(
        limits=limits,
        strategy=name,
        arguments=MappingProxyType(arguments),
        budget=budget,
        fixed_tokens=fixed_tokens,
        history_tokens=history_tokens,
        threshold=threshold,
        forced=force_filter,
        skipped=skip_filter,
        automatic=settings.ENABLE_AUTO_COMPRESSION,
        max_pinned=settings.MAX_PINNED_MESSAGES,
        warnings=warnings,
        min_messages_to_keep=arguments.get("min_messages_to_keep", 0),
        window_size=arguments.get("window_size"),
        trim_to=opts.get("trim_to", DEFAULT_TRIM_TO),
        project_share=opts.get("project_share", DEFAULT_PROJECT_SHARE),
        keep_tool_results=opts.get("keep_tool_results", DEFAULT_KEEP_TOOL_RESULTS),
    )


def _budget(limits: ModelLimits, opts: Mapping[str, Any], tool_definition_tokens: int) -> Budget:
    """The budget from the model's limits and the options (an explicit
    `tool_definition_tokens` option wins over the tools sent with the request)."""
    return compute_budget(
        context_limit=limits.context_window,
        model_max_output=limits.max_output_tokens,
        max_output_tokens=opts.get("max_output_tokens"),
        tool_definition_tokens=opts.get("tool_definition_tokens", tool_definition_tokens),
        budget_percentage=opts.get("budget_percentage", DEFAULT_BUDGET_PERCENTAGE),
        reserve_tokens=opts.get("reserve_tokens", DEFAULT_RESERVE_TOKENS),
        max_input_tokens=limits.max_input_tokens,
    )


def _resolve(
    strategy: str | None,
    options: Mapping[str, Any] | None,
    settings: Settings,
    conversation_id: str | None,
) -> tuple[StrategyName, Mapping[str, Any] | None, tuple[str, ...]]:
    """The strategy to run and its options: None → the settings' defaults; unknown → noop
    (its options ignored) with a warning."""
    if strategy is None or strategy == "":
        strategy = settings.CONTEXT_DEFAULT_STRATEGY
        if options is None:
            options = settings.CONTEXT_DEFAULT_OPTIONS
    name = resolve_strategy(strategy, conversation_id=conversation_id)
    if name != strategy:
        return name, None, (f"unknown strategy {strategy!r}; used noop",)
    return name, options, ()


def _arguments(
    name: StrategyName,
    *,
    opts: Mapping[str, Any],
    budget: Budget,
    fixed_tokens: int,
    settings: Settings,
    memory_options: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The keyword arguments of strategy `name`, defaults filled in from settings (the
    assembly replaces the budget figures with what is left after the parts taken first)."""
    max_pinned = settings.MAX_PINNED_MESSAGES
    min_keep = opts.get("min_messages_to_keep", settings.MIN_MESSAGES_TO_KEEP)
    if name == "noop":
        return {}
    if name == "sliding_window":
        return {
            "window_size": opts.get("window_size", DEFAULT_WINDOW_SIZE),
            "min_messages_to_keep": min_keep,
            "max_pinned": max_pinned,
        }
    history_budget = max(0, budget.budget_tokens - fixed_tokens)
    arguments: dict[str, Any] = {
        "budget_tokens": history_budget,
        "min_messages_to_keep": min_keep,
        "max_pinned": max_pinned,
    }
    if name == "token_budget":
        trim_to = opts.get("trim_to", DEFAULT_TRIM_TO)
        arguments["trim_tokens"] = max(0, int(budget.budget_tokens * trim_to) - fixed_tokens)
    if name == "hierarchical":
        arguments["memory_options"] = hierarchical_memory_options(opts, settings, memory_options)
    return arguments


def hierarchical_memory_options(
    opts: Mapping[str, Any], settings: Settings, memory_options: Mapping[str, Any] | None
) -> MemoryOptions:
    """The conversation's `memory_options` (over the settings' defaults), with the
    strategy's `compression_threshold` and `recent_actions` over them."""
    base = MemoryOptions.parse(memory_options, settings=settings)
    overrides: dict[str, Any] = {}
    if opts.get("compression_threshold") is not None:
        overrides["compression_threshold"] = opts["compression_threshold"]
    if opts.get("recent_actions") is not None:
        overrides["recent_to_keep"] = opts["recent_actions"]
    return MemoryOptions.parse(overrides, base=base, field="options")


@dataclass(slots=True)
class FilterResult:
    """The history to send, with the facts of the context answer (docs/history.md#the-answer)."""

    messages: list[Message]  # kept history: a subsequence of the input
    preamble: list[Message]  # generated messages to put before it (hierarchical memory)
    strategy: str  # strategy applied (after fallback)
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
    cut_seq: int | None = None  # token_budget: the cut point (hysteresis), when it ran


def apply_filter(
    messages: Sequence[Message],
    plan: FilterPlan,
    *,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
) -> FilterResult:
    """Run `plan` over `messages` (oldest first) when its trigger says so. `anchors`:
    indices of the system and pinned messages, if the caller has them. Any exception
    inside a strategy → the whole of `messages` is returned (fail-open) with `error`
    set, and logged."""
    started = time.perf_counter()
    history_tokens = plan.history_tokens
    if history_tokens is None:
        history_tokens = sum(token_count(m, plan.limits.model) for m in messages)
    error: str | None = None
    selection: Selection | None = None
    if plan.runs_at(history_tokens):
        selection, error = run_strategy(messages, plan, anchors=anchors, memory=memory)
    ran = selection is not None and error is None
    if selection is None:
        selection = noop(messages)
    kept = [messages[i] for i in selection.kept]
    removed_ids = [] if len(kept) == len(messages) else _removed_ids(messages, selection.kept)
    # summed from what is sent: `history_tokens` may describe more than `messages`
    # (a caller that read only a window of a long history passes the whole total)
    kept_tokens = sum(token_count(m) for m in kept)
    kept_tokens += sum(token_count(m) for m in selection.preamble)
    return FilterResult(
        messages=kept,
        preamble=selection.preamble,
        strategy=plan.strategy,
        filtered=ran,
        original_count=len(messages),
        kept_count=len(kept),
        removed_ids=removed_ids,
        original_tokens=history_tokens,
        kept_tokens=kept_tokens,
        budget=plan.budget,
        usage_before=round(plan.usage(history_tokens), 4),
        usage_after=round(plan.usage(kept_tokens), 4),
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        error=error,
        warnings=[*plan.warnings, *selection.warnings],
        cut_seq=selection.cut_seq,
    )


def run_strategy(
    messages: Sequence[Message],
    plan: FilterPlan,
    *,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Selection, str | None]:
    """The plan's strategy over `messages`, or — when it raises — everything (fail-open,
    logged) with the error. Touches only the messages the strategy looks at."""
    try:
        return _select(plan, messages, anchors=anchors, memory=memory, overrides=overrides), None
    except Exception as exc:  # fail-open: send everything, say why
        log.exception("context filtering with %s failed; sending the whole history", plan.strategy)
        return noop(messages), f"{type(exc).__name__}: {exc}"


def filter_history(
    messages: Sequence[Message],
    *,
    limits: ModelLimits,
    settings: Settings,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    context_threshold: float | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    fixed_tokens: int = 0,
    history_tokens: int | None = None,
    anchors: Sequence[int] | None = None,
    memory: HierarchicalMemory | None = None,
) -> FilterResult:
    """`plan_filter` then `apply_filter`: a strategy over `messages` for `limits`' model
    (see both for the arguments)."""
    plan = plan_filter(
        limits=limits,
        settings=settings,
        strategy=strategy,
        options=options,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        fixed_tokens=fixed_tokens,
        history_tokens=history_tokens,
    )
    return apply_filter(messages, plan, anchors=anchors, memory=memory)


def _removed_ids(messages: Sequence[Message], kept: list[int]) -> list[str]:
    """Ids of the messages between the kept ones (`kept` ascending), gap by gap."""
    removed: list[str] = []
    previous = -1
    for index in [*kept, len(messages)]:
        if index > previous + 1:
            removed.extend([m.id for m in messages[previous + 1 : index] if m.id is not None])
        previous = index
    return removed


_TOKEN_BUDGET_ONLY = ("cut_seq", "trim_always")  # the assembly's, not options


def _select(
    plan: FilterPlan,
    messages: Sequence[Message],
    *,
    anchors: Sequence[int] | None,
    memory: HierarchicalMemory | None,
    overrides: Mapping[str, Any] | None = None,
) -> Selection:
    arguments = dict(plan.arguments)
    for key, value in (overrides or {}).items():
        if key in arguments or key in _TOKEN_BUDGET_ONLY:
            arguments[key] = value
    if plan.strategy != "token_budget":
        for key in _TOKEN_BUDGET_ONLY:
            arguments.pop(key, None)
    if plan.strategy == "sliding_window":
        return sliding_window(messages, anchors=anchors, **arguments)
    if plan.strategy == "hierarchical":
        return hierarchical(messages, anchors=anchors, memory=memory, **arguments)
    if plan.strategy == "token_budget":
        return token_budget(messages, anchors=anchors, **arguments)
    return noop(messages)
