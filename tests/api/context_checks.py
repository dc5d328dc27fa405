"""Checks every context answer of the assembly tests passes, and labels for its parts.

`check(answer)`: the SDKs' own types (strict), an independent recount of `token_count`
and of its reasoning (`tests.support.recount`), the breakdown summing to it, and the
limits (never above `budget_tokens` once filtered, never above the model's hard room).
`labels(answer)`: the answer as a list of part names (S, CA, P, F, U1, A1, TC, TR, R …)
for the seed 003 sequences, per message (OpenAI) or per content block (Anthropic).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from contextq.catalog import resolve_model
from contextq.settings import get_settings
from tests.api.history_data import validate_with_sdks
from tests.support.recount import recount, recount_reasoning


def hard_room(answer: dict[str, Any]) -> int:
    limits = resolve_model(answer["model"] or None, get_settings())
    window = answer["context_limit"]
    output = min(limits.max_output_tokens, window // 4)
    tools = 0
    if answer["tools"]:
        from contextq.tokens import count_tokens

        text = json.dumps(answer["tools"], ensure_ascii=False, separators=(",", ":"))
        tools = count_tokens(text, limits.counting.counter)  # calibrated if closed
    return window - output - tools


def check(answer: dict[str, Any], *, audio: Callable[[str], float] | None = None) -> None:
    validate_with_sdks(answer)
    assert recount(answer, audio=audio) == answer["token_count"], "the count is not honest"
    breakdown = answer["token_breakdown"]
    assert set(breakdown) == {
        "system",
        "custom_agent",
        "summary",
        "project",
        "files",
        "history",
        "reasoning",
        "reminders",
    }
    assert sum(breakdown.values()) == answer["token_count"]
    assert breakdown["reasoning"] == recount_reasoning(answer), "the reasoning is not honest"
    assert answer["token_count"] <= hard_room(answer)
    allowed = ("pinned messages alone", "the cut point waits for the next user turn")
    if answer["filtered"] and not any(a in w for w in answer["warnings"] for a in allowed):
        assert answer["token_count"] <= answer["budget_tokens"]
    noted = {n["file_id"] for n in answer["file_notes"]}
    assert noted == set(answer["pending_file_ids"]) | set(answer["failed_file_ids"])


def _text_label(text: str, names: dict[str, str]) -> str:
    if text.startswith("Reminders:"):
        return "R"
    if text.startswith('{"documents"'):
        return "F"
    for needle, label in names.items():
        if text.startswith(needle):
            return label
    return f"?{text[:20]}"


def labels(answer: dict[str, Any], names: dict[str, str]) -> list[str]:
    """One label per message (OpenAI) or per block, messages joined by `|` (Anthropic).
    `names`: text prefix → label (U1, A1, CA, …)."""
    if answer["format"] == "openai":
        out = []
        for m in answer["messages"]:
            if m["role"] == "system":
                out.append("S")
            elif m["role"] == "tool":
                out.append("TR")
            elif m.get("tool_calls"):
                out.append("TC")
            else:
                content = m["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                out.append(_text_label(text, names))
        return out
    out = ["S"] if answer["system"] else []
    for m in answer["messages"]:
        blocks = []
        for b in m["content"]:
            if b["type"] == "tool_use":
                blocks.append("TC")
            elif b["type"] == "tool_result":
                blocks.append("TR")
            elif b["type"] == "image":
                blocks.append("IMG")
            else:
                blocks.append(_text_label(b["text"], names))
        out.append("+".join(blocks))
    return out
