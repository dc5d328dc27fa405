"""Issue 17 item 5 through the API: `token_count` is the sum of each message's JSON as
sent (docs/token-counting.md: no per-message framing, no reply priming), the breakdown sums to it,
and the history's stored counts (per message, the conversation's total) mean the same.
Counted here with tiktoken alone, not with the engine's counter."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import tiktoken

from contextq.calibration import kinds
from contextq.tokens import encoding_for_model
from tests.api.test_context_assembly import context, conversation, post

SHORT = [
    {"role": "user", "content": "Where is the retry logic?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "grep", "arguments": '{"q": "retry"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "worker/retry.py:12: def retry(...)"},
    {"role": "assistant", "content": "In worker/retry.py, line 12."},
    {"role": "user", "content": "Make it back off exponentially."},
]


def json_tokens(message: dict[str, Any], enc: tiktoken.Encoding) -> int:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return len(enc.encode_ordinary(text))


def test_token_count_is_the_sum_of_each_message_json_as_sent(app_client: Any) -> None:
    cid = conversation(app_client, model="gpt-4", system_prompt="You fix code.")
    post(app_client, cid, *SHORT)
    enc = encoding_for_model("gpt-4")
    answer = context(app_client, cid, force_filter="true")
    assert answer["token_count"] == sum(json_tokens(m, enc) for m in answer["messages"])
    assert sum(answer["token_breakdown"].values()) == answer["token_count"]
    assert answer["token_count"] <= answer["budget_tokens"]
    # the stored counts mean the same: each message's JSON as sent, nothing added
    history = [m for m in answer["messages"] if m["role"] != "system"]
    assert len(history) == len(SHORT)
    stored = app_client.get(f"/v1/conversations/{cid}/messages").json()["data"]
    for row, sent in zip(stored, history, strict=True):
        assert row["token_count"] == json_tokens(sent, enc)
    total = app_client.get(f"/v1/conversations/{cid}").json()["total_tokens"]
    assert total == sum(json_tokens(m, enc) for m in history)
    assert answer["token_breakdown"]["history"] == total


def test_anthropic_count_is_the_json_of_system_blocks_and_messages(app_client: Any) -> None:
    """Claude's tokenizer is not published: each block's and message's JSON is counted in
    cl100k and calibrated by its content kind (docs/token-counting.md), nothing added."""
    cid = conversation(app_client, model="claude-sonnet-4-5", system_prompt="You fix code.")
    post(app_client, cid, *SHORT)
    enc = encoding_for_model("claude-sonnet-4-5")
    answer = context(app_client, cid, format="anthropic")
    assert answer["token_count_method"] == "calibrated"
    assert answer["token_count_encoding"] == enc.name == "cl100k_base"
    factors = {k: round(f * 100) for k, f in answer["token_count_factors"].items()}

    def calibrated(value: dict[str, Any]) -> int:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        factor = max(factors[k] for k in kinds(text))
        return math.ceil(json_tokens(value, enc) * factor / 100)

    blocks = sum(node(b, calibrated) for b in answer["system"])
    messages = sum(node(m, calibrated) for m in answer["messages"])
    assert answer["token_count"] == blocks + messages  # nothing added per message or list
    exact = sum(node(b, lambda v: json_tokens(v, enc)) for b in answer["system"])
    exact += sum(node(m, lambda v: json_tokens(v, enc)) for m in answer["messages"])
    assert answer["token_count"] >= exact * 1.15  # the lowest published factor (Anthropic)


def node(value: dict[str, Any], count: Callable[[dict[str, Any]], int]) -> int:
    """A message or block whose content is a list: itself with `content: []`, plus each
    element (README's definition for list contents); anything else: its JSON."""
    if isinstance(value.get("content"), list):
        return count({**value, "content": []}) + sum(node(part, count) for part in value["content"])
    return count(value)
