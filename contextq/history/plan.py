"""The plan of a context read, computed once from what is stored about a conversation.

`plan_read(...)` takes the conversation's stored facts (its system prompt, newest
compaction, running token total and its own strategy choice) and a request's
parameters, and decides everything before a single message is read:

- the model's limits, the strategy and its validated options, the budget, the tokens
  that go with the history (system prompt, compaction summary) and the trigger
  (`ReadPlan.filter`, a `FilterPlan`);
- what to load (`ReadPlan.load`): everything; only the messages after the newest
  compaction (with the covered system and pinned ones: they stay verbatim); or, when
  `token_budget` or `sliding_window` is going to filter a long history, only a window
  of its newest messages (`ReadPlan.window`), so a read's cost grows with what can be
  kept, not with the history length.

The service loads what the plan says and hands the messages to
`contextq.assembly.assemble_context` with the SAME plan: no rule of it is derived
twice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from contextq.catalog import resolve_model
from contextq.history.filtering import FilterPlan, plan_filter
from contextq.history.message_tokens import serialise
from contextq.history.types import FormatName, Message, check_format
from contextq.settings import Settings
from contextq.tokens import count_tokens

Load = Literal["all", "window", "after_compaction"]
SUMMARY_ROLE: Literal["user"] = "user"
CHAIN_MARGIN = 64  # messages read before a window so that a tool chain at its edge is whole


@dataclass(frozen=True, slots=True)
class CompactionView:
    """The newest finished compaction, as the context needs it."""

    summary: str
    through_seq: int
    id: str | None = None
    method: str = "summary"


def summary_wrapper(summary: str) -> str:
    """The text of the summary message: the summary in `<conversation_summary>` tags."""
    return (
        "Summary of the earlier part of this conversation (older messages were compacted):\n"
        f"<conversation_summary>\n{summary}\n</conversation_summary>"
    )


def summary_message(compaction: CompactionView) -> Message:
    """The compaction summary as sent: a user turn in `<conversation_summary>` tags (see
    `contextq.history.context` for why it is not a system message)."""
    text = summary_wrapper(compaction.summary)
    return Message(role=SUMMARY_ROLE, content=text, seq=compaction.through_seq)


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    """Read only the newest messages of a long history: at least `keep_newest` of them
    and, for `token_budget`, every message whose running total (`cum_tokens`) passes
    `past_tokens` (the older ones cannot fit the budget), plus `margin` before them."""

    keep_newest: int
    past_tokens: int | None = None
    margin: int = CHAIN_MARGIN

    def start(self, *, last_seq: int, first_seq_past: int | None = None) -> int | None:
        """The first seq to read, or None to read everything. `first_seq_past`: the
        first seq whose running total passes `past_tokens` (found through an index)."""
        first = last_seq - self.keep_newest
        if self.past_tokens is not None:
            if first_seq_past is None:
                return None
            first = min(first_seq_past, first)
        start = first - self.margin
        return start if start > 1 else None


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """What a context read loads and how the engine assembles it."""

    filter: FilterPlan
    format: FormatName
    head: tuple[Message, ...]  # the system prompt, as the first message
    summary: tuple[Message, ...]  # the compaction summary, if any
    compaction: CompactionView | None
    window: HistoryWindow | None  # only the newest messages are needed

    @property
    def load(self) -> Load:
        if self.compaction is not None:
            return "after_compaction"
        return "all" if self.window is None else "window"

    def fail_open(self) -> ReadPlan:
        """The plan when filtering failed: the whole history, unfiltered (fail-open
        means everything, not the window)."""
        return replace(self, filter=self.filter.whole_history(), window=None)

    def widened(self, factor: float) -> ReadPlan:
        """The plan with a token_budget window `factor` times as deep in stored tokens:
        for a history whose messages cost less as sent than stored (reasoning left out:
        `contextq.assembly.Assembled.window_factor`), so that the window holds what the
        budget can hold as sent. No window at all once it would reach the start."""
        window, total = self.window, self.filter.history_tokens
        if window is None or window.past_tokens is None or total is None:
            return self
        past = total - int(self.filter.budget.budget_tokens * factor)
        return replace(self, window=replace(window, past_tokens=past) if past > 0 else None)


def plan_read(
    *,
    settings: Settings,
    model: str | None = None,
    system_prompt: str | None = None,
    compaction: CompactionView | None = None,
    history_tokens: int | None = None,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    default_strategy: str | None = None,
    default_options: Mapping[str, Any] | None = None,
    context_threshold: float | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    format: str = "openai",
    tools: Sequence[Mapping[str, Any]] | None = None,
    extra_fixed_tokens: int = 0,
    memory_options: Mapping[str, Any] | None = None,
    conversation_id: str | None = None,
) -> ReadPlan:
    """Plan a context read (see the module docstring).

    A request's `strategy` and `options` override the conversation's
    (`default_strategy`, `default_options`: its options apply only when the request
    names neither), which override the settings' `CONTEXT_DEFAULT_*`.
    `history_tokens`: the stored running total of the history (used without a
    compaction). `tools`: definitions sent with the request, in the target format; their
    tokens come off the budget. `extra_fixed_tokens`: the other parts that go with every
    answer (the assembly's system prompt, custom agent prompt, reminders). Raises
    ValidationFailed for bad options or format.
    """
    fmt = check_format(format)
    if options is None and strategy is None:
        options = default_options
    limits = resolve_model(model, settings)
    counter = limits.counting.counter  # calibrated for a closed tokenizer (docs/token-counting.md)
    head = (Message(role="system", content=system_prompt),) if system_prompt else ()
    summary = (summary_message(compaction),) if compaction is not None else ()
    plan = plan_filter(
        limits=limits,
        settings=settings,
        strategy=strategy if strategy is not None else default_strategy,
        options=options,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        fixed_tokens=extra_fixed_tokens + sum(_cost(m, counter) for m in head + summary),
        history_tokens=history_tokens if compaction is None else None,
        tool_definition_tokens=tools_tokens(tools, counter),
        memory_options=memory_options,
        conversation_id=conversation_id,
    )
    return ReadPlan(
        filter=plan,
        format=fmt,
        head=head,
        summary=summary,
        compaction=compaction,
        window=_window(plan) if compaction is None else None,
    )


def _cost(message: Message, counter: str) -> int:
    """A generated message (the system prompt, the summary) as the model counts it."""
    return count_tokens(serialise(message.to_openai()), counter)


def tools_tokens(tools: Sequence[Mapping[str, Any]] | None, encoding: str) -> int:
    """Tokens of tool definitions as sent (compact JSON of the list), in `encoding` (or a
    counter: `contextq.tokens`)."""
    if not tools:
        return 0
    serialised = json.dumps(list(tools), ensure_ascii=False, separators=(",", ":"))
    return count_tokens(serialised, encoding)


def _window(plan: FilterPlan) -> HistoryWindow | None:
    """The window a filtering strategy needs, or None when everything must be read."""
    if plan.runs is not True or plan.history_tokens is None:
        return None
    if plan.strategy == "sliding_window" and plan.window_size is not None:
        return HistoryWindow(keep_newest=max(plan.window_size, plan.min_messages_to_keep))
    if plan.strategy != "token_budget":
        return None  # hierarchical reaches back for older critical messages
    # the strategy keeps the newest units within the budget (the minimum gives way to it)
    past = plan.history_tokens - plan.budget.budget_tokens
    if past <= 0:
        return None
    return HistoryWindow(keep_newest=plan.min_messages_to_keep, past_tokens=past)
