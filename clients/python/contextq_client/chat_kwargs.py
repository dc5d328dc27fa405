"""`chat_kwargs`: a context answer as the keyword arguments of
`openai.chat.completions.create(**kw)` or `anthropic.messages.create(**kw)`."""

from __future__ import annotations

from typing import Any, Literal

from contextq_client.models import Context

ChatFormat = Literal["openai", "anthropic"]


def answer_room(context: Context) -> int:
    """The room the context kept for the answer (SPEC §4's `max_output_tokens`, as the
    budget was computed, the strategy's `max_output_tokens` option included), never more
    than what the window has left after the context."""
    left = context.context_limit - context.token_count
    return max(1, min(context.max_output_tokens, left))


def chat_kwargs_from(
    context: Context,
    *,
    format: ChatFormat,
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
        kwargs["max_tokens"] = max_tokens or answer_room(context)
        return kwargs
    kwargs["messages"] = context.messages
    if context.tools:
        kwargs["tools"] = context.tools
    if max_tokens is not None:
        kwargs["max_completion_tokens"] = max_tokens
    return kwargs
