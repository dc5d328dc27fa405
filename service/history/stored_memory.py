"""A conversation's hierarchical memory as stored: load it with the options in force, save it.

The options in force are the conversation's `memory_options` over the settings' defaults
(`MEMORY_MAX_WORKING_MEMORY`, `MEMORY_MAX_CONTEXT_TOKENS`, `MEMORY_COMPRESSION_THRESHOLD`).
A memory is always loaded with them: when they differ from the options stored with the
state (the conversation's options or the settings changed since), the memory is
reconfigured on load (and compressed if the new limit is lower), so every read and the
next write see the options in force.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlmodel import Session

from contextq.errors import ValidationFailed
from contextq.history import HierarchicalMemory
from contextq.history.memory import MemoryOptions
from contextq.settings import Settings, get_settings
from store import history_queries as q
from store.history_tables import Conversation

log = logging.getLogger("contextq.memory")


def checked_memory_options(given: Any, settings: Settings) -> dict[str, Any]:
    """A client's `memory_options`, validated against the settings' defaults
    (ValidationFailed naming `memory_options.<option>`); only the options given."""
    options = MemoryOptions.parse(given, settings=settings)
    return {key: getattr(options, key) for key in given}


def options_in_force(conversation: Conversation | None, settings: Settings) -> MemoryOptions:
    """The conversation's `memory_options` over the settings' defaults."""
    given = conversation.memory_options if conversation is not None else None
    try:
        return MemoryOptions.parse(given, settings=settings)
    except ValidationFailed as exc:  # valid when written, not under today's defaults
        log.warning(
            "memory_options of conversation %s no longer valid (%s); the settings' defaults apply",
            conversation.id if conversation is not None else "?",
            exc,
        )
        return MemoryOptions.defaults(settings)


def load_memory(
    session: Session,
    *,
    conversation_id: str,
    settings: Settings | None = None,
    conversation: Conversation | None = None,
) -> HierarchicalMemory:
    """The conversation's memory with the options in force (an empty one if none is
    stored). `conversation` defaults to the session's row (no query once loaded)."""
    settings = settings or get_settings()
    if conversation is None:
        conversation = session.get(Conversation, conversation_id)
    options = options_in_force(conversation, settings)
    memory = HierarchicalMemory.from_dict(
        q.get_memory_state(session, conversation_id=conversation_id), options=options
    )
    if memory.options != options:
        memory.configure(options)
    return memory


def save_memory(session: Session, *, conversation_id: str, memory: HierarchicalMemory) -> None:
    q.save_memory_state(session, conversation_id=conversation_id, state=memory.to_dict())
