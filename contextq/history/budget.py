"""The token budget of a context (docs/context.md#the-rooms)."""

from __future__ import annotations

from dataclasses import dataclass

from contextq.strategy_options import DEFAULT_BUDGET_PERCENTAGE, DEFAULT_RESERVE_TOKENS


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
    """docs/history.md#history-strategies: (context_limit - max_output_tokens -
    tool_definition_tokens)
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
