"""The line every contextq process (API, worker, beat) logs at start
(docs/history.md#history-strategies)."""

from __future__ import annotations

import logging

from contextq.catalog import resolve_model
from contextq.settings import Settings

log = logging.getLogger("contextq.startup")


def context_management_line(settings: Settings) -> str:
    """`Context management initialized for provider=<p>: max_tokens=<n>, …`.

    max_tokens is the context window a model the catalogue does not know gets: the
    `LLM_PROVIDER` default, capped by `MAX_CONTEXT_TOKENS`.
    """
    limits = resolve_model(None, settings)
    provider = settings.LLM_PROVIDER or limits.provider
    return (
        f"Context management initialized for provider={provider}: "
        f"max_tokens={limits.context_window}, min_messages={settings.MIN_MESSAGES_TO_KEEP}, "
        f"auto_compression={settings.ENABLE_AUTO_COMPRESSION}"
    )


def log_context_management(settings: Settings) -> None:
    log.info("%s", context_management_line(settings))
