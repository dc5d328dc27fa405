"""A conversation's hierarchical memory (SPEC §2 "Compaction and jobs", memory part).

The state is the engine's `HierarchicalMemory.to_dict()` in one row per conversation.
Appended messages feed it in their own transaction (`observe_messages`); the routes
read a snapshot and write the goal, phase, decisions and subtasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlmodel import Session

from contextq.history import HierarchicalMemory, Message
from service.history.conversations import owned_conversation
from store import history_queries as q


def load_memory(session: Session, *, conversation_id: str) -> HierarchicalMemory:
    return HierarchicalMemory.from_dict(
        q.get_memory_state(session, conversation_id=conversation_id)
    )


def observe_messages(
    session: Session, *, conversation_id: str, messages: Sequence[Message], now: datetime
) -> None:
    """Feed new messages to the memory (decisions, errors, actions), same transaction."""
    memory = load_memory(session, conversation_id=conversation_id)
    for message in messages:
        message.created_at = now
        memory.observe(message)
        message.created_at = None  # as a read from the table gives it (no created_at)
    q.save_memory_state(session, conversation_id=conversation_id, state=memory.to_dict())


def get_memory(*, session: Session, owner_id: str, conversation_id: str) -> dict[str, Any]:
    """The snapshot: goal with subtasks and progress, phase, decisions, error patterns,
    stats."""
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    return load_memory(session, conversation_id=conversation_id).snapshot()


def _change(
    session: Session,
    owner_id: str,
    conversation_id: str,
    change: Callable[[HierarchicalMemory], object],
) -> dict[str, Any]:
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id, for_update=True)
    memory = load_memory(session, conversation_id=conversation_id)
    change(memory)
    q.save_memory_state(session, conversation_id=conversation_id, state=memory.to_dict())
    return memory.snapshot()


def set_goal(
    *, session: Session, owner_id: str, conversation_id: str, text: str, subtasks: list[str]
) -> dict[str, Any]:
    return _change(session, owner_id, conversation_id, lambda m: m.set_goal(text, subtasks))


def set_phase(
    *, session: Session, owner_id: str, conversation_id: str, phase: str
) -> dict[str, Any]:
    return _change(session, owner_id, conversation_id, lambda m: m.set_phase(phase))


def add_decision(
    *,
    session: Session,
    owner_id: str,
    conversation_id: str,
    decision: str,
    rationale: str,
    impact: str,
) -> dict[str, Any]:
    return _change(
        session,
        owner_id,
        conversation_id,
        lambda m: m.add_decision(decision, rationale=rationale, impact=impact),
    )


def complete_subtask(
    *, session: Session, owner_id: str, conversation_id: str, name: str
) -> dict[str, Any]:
    return _change(session, owner_id, conversation_id, lambda m: m.complete_subtask(name))
