"""Gemini function calls matched to their responses, for the integrations' conversions
(a `functionResponse` names its call by `id` when it has one, else by name: the oldest
open call of that name)."""

from __future__ import annotations

from typing import Any


def answered_call(answer: dict[str, Any], open_calls: list[tuple[str, str]]) -> Any:
    """The id of the call `answer` (a `functionResponse`) answers, taken out of
    `open_calls` (`(id, name)` pairs, oldest first)."""
    call_id = answer.get("id") or next(
        (i for i, name in open_calls if name == answer.get("name")), answer.get("name")
    )
    open_calls[:] = [c for c in open_calls if c[0] != call_id]
    return call_id
