"""`chat_kwargs`: a context answer as the keyword arguments of
`openai.chat.completions.create(**kw)` or `anthropic.messages.create(**kw)`."""

from __future__ import annotations

from typing import Any, Literal

from contextq.catalog import resolve_model
from contextq.history.budget import compute_budget
from contextq.sdk.models import Context
from contextq.settings import Settings

ChatFormat = Literal["openai", "anthropic"]


def answer_room(context: Context, *, options: dict[str, Any] | None = None) -> int:
    """The room the context kept for the answer (SPEC §4's `max_output_tokens`): the
    answer's own figure when it gives one, else the strategy option, else the model's max
    output capped at a quarter of the window, as the budget was computed. Never more than
    what the window has left after the context."""
    given = (context.model_extra or {}).get("max_output_tokens")
    if not isinstance(given, int) or given <= 0:
        given = (options or {}).get("max_output_tokens")
    if not isinstance(given, int) or given <= 0:
        limits = resolve_model(context.model, Settings())
        given = compute_budget(
            context_limit=context.context_limit, model_max_output=limits.max_output_tokens
        ).max_output_tokens
    left = context.context_limit - context.token_count
    return max(1, min(given, left))


def chat_kwargs_from(
    context: Context,
    *,
    format: ChatFormat,
    options: dict[str, Any] | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """OpenAI: `model`, `messages`, and `tools` when there are any. Anthropic: `model`,
    `system` (when there is one), `messages`, `tools` (when any) and `max_tokens`."""
    kwargs: dict[str, Any] = {"model": context.model}
    if format == "anthropic":
        if context.system:
            kwargs["system"] = context.system
        kwargs["messages"] = context.messages
        if context.tools:
            kwargs["tools"] = context.tools
        kwargs["max_tokens"] = max_tokens or answer_room(context, options=options)
        return kwargs
    kwargs["messages"] = context.messages
    if context.tools:
        kwargs["tools"] = context.tools
    if max_tokens is not None:
        kwargs["max_completion_tokens"] = max_tokens
    return kwargs
