"""The plan of a context read: the history plan (`contextq.history.plan_read`) plus what
the assembly needs from the conversation and the request, decided before any message
is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from contextq.assembly.formats import tools_for, wire_format
from contextq.assembly.inputs import ProjectContext, Prompts
from contextq.assembly.pieces import text_piece
from contextq.assembly.prompts import custom_agent_text, reminder_text, system_text
from contextq.assembly.tools import Tool, parse_tools
from contextq.assembly.wire import Target
from contextq.catalog import resolve_model
from contextq.history.plan import CompactionView, ReadPlan, plan_read
from contextq.reasoning_rules import rule_for
from contextq.settings import Settings
from contextq.tokens import encoding_name_for_model


@dataclass(frozen=True, slots=True)
class ContextPlan:
    read: ReadPlan
    prompts: Prompts
    tools: tuple[Tool, ...]
    tools_out: tuple[dict[str, Any], ...]  # the definitions in the target format
    target: Target
    now: datetime
    project: ProjectContext = field(default_factory=ProjectContext)

    @property
    def model_key(self) -> str:
        """The model the context is for, as the cut point is stored under."""
        limits = self.read.filter.limits
        return limits.model or limits.catalog_id or ""


def plan_context(
    *,
    settings: Settings,
    now: datetime,
    prompts: Prompts,
    model: str | None = None,
    stored_model: str | None = None,
    tools: Sequence[Any] | None = None,
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
    memory_options: Mapping[str, Any] | None = None,
    conversation_id: str | None = None,
    project: ProjectContext | None = None,
) -> ContextPlan:
    """Plan a context read. `stored_model`: the model stored message counts were made
    for (reused when its encoding is the requested model's). `tools`: definitions in
    either format (the request's, else the conversation's). Raises ValidationFailed for
    a bad format, options or tool definition."""
    wire = wire_format(format)
    parsed = parse_tools(tools)
    tools_out = tools_for(parsed, wire.name)
    limits = resolve_model(model, settings)
    target = Target(
        wire,
        limits.counting.counter,
        limits.provider,
        encoding_name_for_model(stored_model or None),
        # the name asked for first: a newer model than the catalogue's matches an older
        # id by prefix (gpt-5.6-mini → gpt-5), whose rule is not its own
        rule_for(limits.model or limits.catalog_id),
    )
    read = plan_read(
        settings=settings,
        model=model,
        compaction=compaction,
        history_tokens=history_tokens,
        strategy=strategy,
        options=options,
        default_strategy=default_strategy,
        default_options=default_options,
        context_threshold=context_threshold,
        force_filter=force_filter,
        skip_filter=skip_filter,
        format=wire.name,
        tools=tools_out,
        extra_fixed_tokens=_fixed_tokens(prompts, parsed, now, target),
        memory_options=memory_options,
        conversation_id=conversation_id,
    )
    return ContextPlan(
        read, prompts, parsed, tuple(tools_out), target, now, project or ProjectContext()
    )


def _fixed_tokens(prompts: Prompts, tools: tuple[Tool, ...], now: datetime, target: Target) -> int:
    """S, CA and R as known before the turn is read (no search yet): a lower bound of
    what goes with every answer, for the trigger decided from stored totals."""
    total = 0
    system = system_text(prompts, now=now, tools=tools, search_ran=False)
    if system:
        total += text_piece(system, "system", "system", target).cost
    for text in (custom_agent_text(prompts), reminder_text(prompts, search_ran=False)):
        if text:
            total += text_piece(text, "user", "custom_agent", target).cost
    return total
