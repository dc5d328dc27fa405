"""Conversations: create, read, update, delete (docs/api.md#routes).

Another owner's conversation is `NotFound`, exactly as a missing one is. A strategy
name, its options and the threshold are checked where they are written (422 naming
the field); the context read falls back for a bad name met later. `memory_options` are
checked against the settings' defaults. A `project_id` must name one of the owner's
projects (404 `project not found`, as an upload's). Every change rewrites the conversation's
private-data checkpoint once it commits; a deleted conversation's is removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmodel import Session

from contextq.assembly import check_timezone, parse_tools, reminder_texts
from contextq.errors import ValidationFailed
from contextq.history import validate_options, validate_strategy, validate_threshold
from contextq.settings import Settings
from contextq.strategy_options import DEFAULT_STRATEGY
from service.history.checkpoint import checkpoint_after_commit
from service.history.stored_memory import checked_memory_options
from service.projects import require_project
from service.workspaces.locate import owned_conversation
from service.workspaces.removal import remove_workspace
from store import cursors
from store import history_queries as q
from store.history_tables import Conversation


def _checked(
    data: Mapping[str, Any], settings: Settings, current: Conversation | None = None
) -> dict[str, Any]:
    """`data` with its strategy, options and threshold validated (ValidationFailed names
    the field); options are checked against the strategy they will run with."""
    out = dict(data)
    strategy = out.get("context_strategy", current.context_strategy if current else None)
    options = out.get("context_options", current.context_options if current else None)
    if strategy is not None:
        validate_strategy(strategy, field="context_strategy")
    if ("context_strategy" in out or "context_options" in out) and options is not None:
        out["context_options"] = validate_options(
            strategy or DEFAULT_STRATEGY, options, field="context_options"
        )
    if out.get("context_threshold") is not None:
        out["context_threshold"] = validate_threshold(out["context_threshold"])
    if out.get("memory_options") is not None:
        out["memory_options"] = checked_memory_options(out["memory_options"], settings)
    _check_context_fields(out)
    return out


def _check_context_fields(data: Mapping[str, Any]) -> None:
    """The fields the context reads (docs/history.md#the-ready-to-send-context), checked where they
    are written: tool definitions in either format, reminders as texts, an IANA time zone, tool
    names."""
    parse_tools(data.get("tools"), field="tools")
    try:
        reminder_texts(data.get("reminders"))
    except ValueError as exc:
        raise ValidationFailed(str(exc), field="reminders") from None
    check_timezone(data.get("timezone"), field="timezone")
    for i, name in enumerate(data.get("search_tools") or ()):
        if not isinstance(name, str) or not name.strip() or len(name) > 128:
            raise ValidationFailed(
                "search_tools must be tool names (1-128 characters)", field=f"search_tools[{i}]"
            )


def _check_project(session: Session, owner_id: str, data: Mapping[str, Any]) -> None:
    """A conversation's `project_id` names one of the owner's projects: NotFound (404
    `project not found`) otherwise, as for an upload's (docs/api.md#routes)."""
    project_id = data.get("project_id")
    if project_id is not None:
        require_project(session, owner_id=owner_id, project_id=project_id)


def _checkpoint(session: Session, settings: Settings, conversation: Conversation) -> None:
    checkpoint_after_commit(
        session, settings=settings, owner_id=conversation.owner_id, conversation_id=conversation.id
    )


def create_conversation(
    *, session: Session, settings: Settings, owner_id: str, data: Mapping[str, Any]
) -> Conversation:
    _check_project(session, owner_id, data)
    conversation = q.create_conversation(session, owner_id=owner_id, data=_checked(data, settings))
    _checkpoint(session, settings, conversation)
    return conversation


def get_conversation(*, session: Session, owner_id: str, conversation_id: str) -> Conversation:
    return owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)


def list_conversations(
    *, session: Session, owner_id: str, limit: int, cursor: str | None = None
) -> tuple[list[Conversation], str | None]:
    """A page of the owner's conversations, newest first, and the next page's cursor."""
    try:
        after = cursors.decode(cursor) if cursor else None
    except ValueError:
        raise ValidationFailed(
            "invalid cursor: pass next_cursor from the previous page", field="cursor"
        ) from None
    return q.list_conversations(session, owner_id=owner_id, limit=limit, after=after)


def update_conversation(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    data: Mapping[str, Any],
) -> Conversation:
    """Change the fields in `data` (only those the caller set)."""
    if "replace_system_prompt" in data and data["replace_system_prompt"] is None:
        raise ValidationFailed(
            "replace_system_prompt must be true or false", field="replace_system_prompt"
        )
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    _check_project(session, owner_id, data)
    conversation = q.update_conversation(
        session, conversation=conversation, data=_checked(data, settings, conversation)
    )
    _checkpoint(session, settings, conversation)
    return conversation


def delete_conversation(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> None:
    """Delete it with its messages, compactions, memory, checkpoint and workspace."""
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    remove_workspace(
        session=session, settings=settings, owner_id=owner_id, conversation_id=conversation.id
    )
    _checkpoint(session, settings, conversation)  # removed once the delete commits
    q.delete_conversation(session, conversation=conversation)
