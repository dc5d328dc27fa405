"""Helpers of the native-parser tests."""

from __future__ import annotations

from typing import Any

import pytest

from contextq.errors import ValidationFailed
from contextq.history.native import parse_native
from contextq.history.types import Message


def refused(fmt: str, items: list[Any], open_calls: Any = ()) -> tuple[str | None, str]:
    """(the place, the message) of the refusal parsing `items` must raise."""
    with pytest.raises(ValidationFailed) as caught:
        parse_native(fmt, items, model=None, open_calls=open_calls)
    return caught.value.field, str(caught.value)


def summary(rows: list[Message]) -> list[tuple[str, Any, Any, Any]]:
    """Each row as (role, content, its call ids, the call id it answers)."""
    return [
        (m.role, m.content, [c["id"] for c in m.tool_calls or ()], m.tool_call_id) for m in rows
    ]
