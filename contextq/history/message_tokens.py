"""Token cost of a chat message: its JSON serialisation as the API sends it, plus overhead.

(`contextq.tokens` counts plain text; this module counts whole messages with it.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from contextq.history.types import Message
from contextq.tokens import count_tokens, encoding_name_for_model

# OpenAI documents 3 tokens of framing per message (<|start|>role…<|end|>) and 3 more
# priming the reply; the JSON keys we count already cover the role name.
MESSAGE_OVERHEAD_TOKENS = 3
REPLY_PRIMING_TOKENS = 3


def serialise(message: Mapping[str, Any]) -> str:
    """The message as the API request body carries it: compact JSON, UTF-8 kept as is."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def count_message_tokens(message: Mapping[str, Any] | Message, model: str | None = None) -> int:
    """Tokens of `message` (an OpenAI-style dict or a Message) for `model`'s encoding.

    = tokens of `json.dumps(message, separators=(",", ":"), ensure_ascii=False)`
      + `MESSAGE_OVERHEAD_TOKENS`.
    Computed once at insert and stored; the engine never re-counts a stored message.
    """
    data = message.to_openai() if isinstance(message, Message) else message
    return count_tokens(serialise(data), encoding_name_for_model(model)) + MESSAGE_OVERHEAD_TOKENS


def token_count(message: Message, model: str | None = None) -> int:
    """The stored count, or (when missing) the count computed now and remembered."""
    if message.token_count is None:
        message.token_count = count_message_tokens(message, model)
    return message.token_count
