"""History engine: plain functions over plain data, no I/O (a model's summary is asked
for by the service: `service.summarizers`).
It never imports `contextq.assembly`, which builds on it (a test checks the direction).

The service layer calls:

- `count_message_tokens(message_dict, model)` at insert (store it as `token_count`);
- `validate_strategy` / `validate_options` / `validate_threshold` when a conversation
  is written (422 naming the field);
- `plan_read(...)` for GET /context: what to load and how to filter, from the stored
  totals (`contextq.assembly.plan_context` wraps it; `contextq.assembly` assembles the
  whole context, and a bare history for a caller holding it whole; `filter_history` is
  the strategy step alone);
- `compact(messages, summarizer, settings, previous_summary=...)` in the compaction task
  (`service.summarizers.get_summarizer(settings)`);
- `HierarchicalMemory` (`from_dict`, `observe`, `set_goal`, …, `to_dict`, `snapshot`).

Modules: `types` (the `Message` dataclass, the output format names), `message_tokens`
(a message's token cost),
`chains` (tool-call units), `options` (strategy names and options), `budget`,
`strategies` (the selection functions), `filtering` (whether and how one runs),
`plan` (the plan of a context read), `context` (the visible history), `compaction`,
`summarizers`, `memory`. The output formats themselves are the assembly's
(`contextq.assembly.formats`).
"""

from contextq.history.budget import Budget, compute_budget
from contextq.history.compaction import CompactionOutcome, CompactionPlan, compact, plan_compaction
from contextq.history.context import visible_history
from contextq.history.filtering import (
    FilterPlan,
    FilterResult,
    apply_filter,
    filter_history,
    plan_filter,
)
from contextq.history.memory import HierarchicalMemory, normalise_error, score_action
from contextq.history.message_tokens import count_message_tokens
from contextq.history.pinned import find_anchors
from contextq.history.plan import CompactionView, HistoryWindow, ReadPlan, plan_read
from contextq.history.strategies import (
    Selection,
    hierarchical,
    noop,
    sliding_window,
    token_budget,
)
from contextq.history.summarizers import ExtractiveSummarizer, Summarizer, truncate_history
from contextq.history.types import Kind, Message, Role
from contextq.strategy_options import (
    STRATEGY_NAMES,
    StrategyName,
    resolve_strategy,
    validate_options,
    validate_strategy,
    validate_threshold,
)

__all__ = [
    "STRATEGY_NAMES",
    "Budget",
    "CompactionOutcome",
    "CompactionPlan",
    "CompactionView",
    "ExtractiveSummarizer",
    "FilterPlan",
    "FilterResult",
    "HierarchicalMemory",
    "HistoryWindow",
    "Kind",
    "Message",
    "ReadPlan",
    "Role",
    "Selection",
    "StrategyName",
    "Summarizer",
    "apply_filter",
    "compact",
    "compute_budget",
    "count_message_tokens",
    "filter_history",
    "find_anchors",
    "hierarchical",
    "noop",
    "normalise_error",
    "plan_compaction",
    "plan_filter",
    "plan_read",
    "resolve_strategy",
    "score_action",
    "sliding_window",
    "token_budget",
    "truncate_history",
    "validate_options",
    "validate_strategy",
    "validate_threshold",
    "visible_history",
]
