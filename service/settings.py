"""The owner's settings (docs/history.md#the-ready-to-send-context): the saved system prompt that
stands in for a conversation's own when it has none (`GET/PUT /v1/settings`)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from contextq.assembly import default_system_prompt
from store import context_queries as q


def get_settings(*, session: Session, owner_id: str) -> dict[str, Any]:
    """`system_prompt` (null when none is saved), and the packaged default that applies
    then (`default_system_prompt`), so a client sees what a conversation gets."""
    row = q.get_owner_settings(session, owner_id=owner_id)
    return _public(row.system_prompt if row else None, row.updated_at if row else None)


def put_settings(*, session: Session, owner_id: str, system_prompt: str | None) -> dict[str, Any]:
    """Save the owner's system prompt (null or blank: back to the packaged default)."""
    text = system_prompt if system_prompt is not None and system_prompt.strip() else None
    row = q.put_owner_settings(session, owner_id=owner_id, system_prompt=text)
    return _public(row.system_prompt, row.updated_at)


def _public(system_prompt: str | None, updated_at: Any) -> dict[str, Any]:
    return {
        "system_prompt": system_prompt,
        "default_system_prompt": default_system_prompt(),
        "updated_at": updated_at,
    }
