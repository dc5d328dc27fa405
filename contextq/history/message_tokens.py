"""Token cost of a chat message: its JSON serialisation as the API sends it
(docs/token-counting.md).

The JSON's own keys (`"role"`, `"content"`, …) stand for the message frame: no
per-message framing and no reply priming is added on top, so a list of messages costs
the sum of its messages, each exactly what `count_message_tokens` says.
(`contextq.tokens` counts plain text; this module counts whole messages with it.)

Stored counts: the service computes this once at insert and stores it as the message's
`token_count` (with the conversation's running totals). Rows counted before docs/token-counting.md
said "nothing added" held 3 more tokens per message; migration `0012_honest_counts` takes
them off (`token_count`, `cum_tokens` and the conversation's totals), so a stored count
always equals what the context counts for the same message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from contextq.history.types import Message
from contextq.tokens import count_tokens, encoding_name_for_model

# Nothing is added per message: the name is kept (at 0) for callers that still add it.
MESSAGE_OVERHEAD_TOKENS = 0


def serialise(message: Mapping[str, Any]) -> str:
    """The message as the API request body carries it: compact JSON, UTF-8 kept as is."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def count_message_tokens(message: Mapping[str, Any] | Message, model: str | None = None) -> int:
    """Tokens of `message` (an OpenAI-style dict or a Message) for `model`'s encoding:
    the tokens of `json.dumps(message, separators=(",", ":"), ensure_ascii=False)`.
    Computed once at insert and stored; the engine never re-counts a stored message."""
    data = message.to_openai() if isinstance(message, Message) else message
    return count_tokens(serialise(data), encoding_name_for_model(model))


def token_count(message: Message, model: str | None = None) -> int:
    """The stored count, or (when missing) the count computed now and remembered."""
    if message.token_count is None:
        message.token_count = count_message_tokens(message, model)
    return message.token_count
