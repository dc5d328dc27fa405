"""History engine: plain functions over plain data (no I/O but the `openai` summariser).

The service layer calls:

- `count_message_tokens(message_dict, model)` at insert (store it as `token_count`);
- `validate_strategy` / `validate_options` / `validate_threshold` when a conversation
  is written (422 naming the field);
- `build_history_context(...)` for GET /context (or `filter_history` alone);
- `compact(messages, get_summarizer(settings), settings, previous_summary=...)` in the
  compaction task;
- `HierarchicalMemory` (`from_dict`, `observe`, `set_goal`, …, `to_dict`, `snapshot`).
"""

from contextq.history.compaction import CompactionOutcome, CompactionPlan, compact, plan_compaction
from contextq.history.context import (
    CompactionView,
    ContextReport,
    HistoryContext,
    build_history_context,
    visible_history,
)
from contextq.history.formats import to_anthropic, to_openai
from contextq.history.memory import HierarchicalMemory, normalise_error, score_action
from contextq.history.strategies import (
    STRATEGY_NAMES,
    Budget,
    FilterResult,
    Selection,
    StrategyName,
    compute_budget,
    filter_history,
    find_anchors,
    hierarchical,
    noop,
    resolve_strategy,
    sliding_window,
    token_budget,
    validate_options,
    validate_strategy,
    validate_threshold,
)
from contextq.history.summarizers import (
    ExtractiveSummarizer,
    OpenAISummarizer,
    Summarizer,
    get_summarizer,
    truncate_history,
)
from contextq.history.tokens import count_message_tokens
from contextq.history.types import Kind, Message, Role

__all__ = [
    "STRATEGY_NAMES",
    "Budget",
    "CompactionOutcome",
    "CompactionPlan",
    "CompactionView",
    "ContextReport",
    "ExtractiveSummarizer",
    "FilterResult",
    "HierarchicalMemory",
    "HistoryContext",
    "Kind",
    "Message",
    "OpenAISummarizer",
    "Role",
    "Selection",
    "StrategyName",
    "Summarizer",
    "build_history_context",
    "compact",
    "compute_budget",
    "count_message_tokens",
    "filter_history",
    "find_anchors",
    "get_summarizer",
    "hierarchical",
    "noop",
    "normalise_error",
    "plan_compaction",
    "resolve_strategy",
    "score_action",
    "sliding_window",
    "to_anthropic",
    "to_openai",
    "token_budget",
    "truncate_history",
    "validate_options",
    "validate_strategy",
    "validate_threshold",
    "visible_history",
]
