"""`chat_kwargs`: a context answer as the keyword arguments of the vendor SDK's call —
`openai.chat.completions.create(**kw)`, `anthropic.messages.create(**kw)`,
`openai.responses.create(**kw)` or google-genai's `models.generate_content(**kw)`."""

from __future__ import annotations

from typing import Any

from contextq_client.models import Context, ContextFormat

ChatFormat = ContextFormat


def answer_room(context: Context) -> int:
    """The room the context kept for the answer (`max_output_tokens`, docs/context.md#the-rooms, as
    the budget was computed, the strategy's `max_output_tokens` option included), never more
    than what the window has left after the context."""
    left = context.context_limit - context.token_count
    return max(1, min(context.max_output_tokens, left))


def _openai(context: Context, max_tokens: int | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": context.model, "messages": context.messages or []}
    if context.tools:
        kwargs["tools"] = context.tools
    if max_tokens is not None:
        kwargs["max_completion_tokens"] = max_tokens
    return kwargs


def _anthropic(context: Context, max_tokens: int | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": context.model}
    if context.system:
        kwargs["system"] = context.system
    kwargs["messages"] = context.messages or []
    if context.tools:
        kwargs["tools"] = context.tools
    kwargs["max_tokens"] = max_tokens or answer_room(context)
    return kwargs


def _responses(context: Context, max_tokens: int | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": context.model}
    if context.instructions:
        kwargs["instructions"] = context.instructions
    kwargs["input"] = context.input or []
    if context.tools:
        kwargs["tools"] = context.tools
    if max_tokens is not None:
        kwargs["max_output_tokens"] = max_tokens
    return kwargs


def _gemini(context: Context, max_tokens: int | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if context.system_instruction:
        config["system_instruction"] = context.system_instruction
    if context.tools:
        config["tools"] = context.tools
    if max_tokens is not None:
        config["max_output_tokens"] = max_tokens
    return {"model": context.model, "contents": context.contents or [], "config": config}


def chat_kwargs_from(
    context: Context,
    *,
    format: ChatFormat,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """OpenAI: `model`, `messages`, and `tools` when there are any. Anthropic: `model`,
    `system` (when there is one), `messages`, `tools` (when any) and `max_tokens`.
    Responses: `model`, `instructions` (when any), `input`, `tools` (when any). Gemini:
    `model`, `contents` and `config` (`system_instruction`, `tools`, when any).
    `max_tokens` given: `max_completion_tokens`, `max_tokens`, `max_output_tokens`, and
    Gemini's `config.max_output_tokens`."""
    build = BUILDERS.get(format)
    if build is None:
        raise ValueError(f"format must be one of {', '.join(BUILDERS)}, not {format!r}")
    return build(context, max_tokens)


BUILDERS = {"openai": _openai, "anthropic": _anthropic, "responses": _responses, "gemini": _gemini}
