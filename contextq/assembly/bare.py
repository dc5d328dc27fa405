"""A history assembled alone (no files, no prompt layers or sections) by the same engine,
for callers that hold a whole history: benchmarks, tests of the strategies end to end.

It lives in the assembly (it calls `assemble_context`); the history package below it
never imports the assembly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from contextq.assembly.context import assemble_context
from contextq.assembly.inputs import Prompts
from contextq.assembly.plan import plan_context
from contextq.history.plan import CompactionView
from contextq.history.types import FormatName, Message
from contextq.settings import Settings

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory


@dataclass(slots=True)
class HistoryContext:
    """A context answer: `messages`, the list in the requested format (its `messages`,
    `input` or `contents`), the Anthropic `system` blocks, and the rest of the answer
    (`report`: token_count, removed_message_ids, a format's own fields, …)."""

    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None
    report: dict[str, Any] = field(default_factory=dict)


def build_history_context(
    messages: Sequence[Message],
    *,
    settings: Settings,
    conversation_id: str | None = None,
    model: str | None = None,
    system_prompt: str | None = None,
    compaction: CompactionView | None = None,
    strategy: str | None = None,
    options: Mapping[str, Any] | None = None,
    context_threshold: float | None = None,
    force_filter: bool = False,
    skip_filter: bool = False,
    format: FormatName = "openai",
    tools: Sequence[Mapping[str, Any]] | None = None,
    memory: HierarchicalMemory | None = None,
    history_tokens: int | None = None,
    cut_seq: int | None = None,
    clear_seq: int | None = None,
) -> HistoryContext:
    """A history assembled alone: `system_prompt` as given (no default prompt, no dated
    sections), no files, no reminders. `messages`: the stored history in seq order with
    `token_count` set; `history_tokens`: their stored running total, if the caller has
    it. `cut_seq`, `clear_seq`: the state carried from the previous answer (the report
    gives the next ones). Raises ValidationFailed for bad options / format."""
    plan = plan_context(
        settings=settings,
        now=datetime.now(UTC),
        prompts=Prompts(system_prompt=system_prompt, use_default=False, sections=False),
        model=model,
        stored_model=model,
        tools=tools,
        compaction=compaction,
        history_tokens=history_tokens,
        strategy=strategy,
        options=options,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        format=format,
        conversation_id=conversation_id,
    )
    assembled = assemble_context(
        messages,
        plan,
        cut_seq=cut_seq,
        clear_seq=clear_seq,
        memory=memory,
        conversation_id=conversation_id,
    )
    answer = dict(assembled.answer)
    out = answer.pop(plan.target.wire.list_key)
    system = answer.pop("system", None)
    answer["cut_seq"] = assembled.cut_seq
    answer["carry"] = assembled.carry
    return HistoryContext(out, system, answer)
