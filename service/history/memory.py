"""A conversation's hierarchical memory (docs/history.md#hierarchical-memory):
seed 001's ContextManager over HTTP.

The state is the engine's `HierarchicalMemory.to_dict()` in one row per conversation,
loaded with the options in force (`stored_memory`). Appended messages feed it in their
own transaction (`observe_messages`); the routes read it (snapshot, agent context text,
statistics, export) and change it (goal, phase, decisions, subtasks, actions, errors,
reset, import). Every change also rewrites the conversation's private-data checkpoint
once it commits (`checkpoint.checkpoint_after_commit`).

Provenance (docs/provenance.md): a goal, a decision or an error written through the API may name
the seqs of the messages it came from (`seqs`, checked against the conversation's); the
memory keeps them and summaries cite them. Decisions and errors the memory observes in
messages get the message's seq on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any, TypeVar

from sqlmodel import Session

from contextq.errors import ValidationFailed
from contextq.history import HierarchicalMemory, Message
from contextq.settings import Settings
from service.history.checkpoint import checkpoint_after_commit
from service.history.stored_memory import load_memory, options_in_force, save_memory
from service.workspaces.locate import owned_conversation
from store import history_queries as q
from store.history_tables import Conversation

T = TypeVar("T")

__all__ = [
    "add_action",
    "add_decision",
    "complete_subtask",
    "export_memory",
    "get_memory",
    "import_memory",
    "load_memory",
    "memory_context",
    "memory_stats",
    "observe_messages",
    "reset_memory",
    "set_goal",
    "set_phase",
    "track_error",
]


def observe_messages(
    session: Session,
    *,
    settings: Settings,
    conversation: Conversation,
    messages: Sequence[Message],
    now: datetime,
) -> None:
    """Feed new messages to the memory (decisions, errors, actions), same transaction."""
    memory = load_memory(
        session, conversation_id=conversation.id, settings=settings, conversation=conversation
    )
    for message in messages:
        message.created_at = now
        memory.observe(message)
        message.created_at = None  # as a read from the table gives it (no created_at)
    _save(session, settings, conversation, memory)


def _save(
    session: Session, settings: Settings, conversation: Conversation, memory: HierarchicalMemory
) -> None:
    save_memory(session, conversation_id=conversation.id, memory=memory)
    checkpoint_after_commit(
        session, settings=settings, owner_id=conversation.owner_id, conversation_id=conversation.id
    )


# ---------------------------------------------------------------- reads


def _read(
    session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> HierarchicalMemory:
    conversation = owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    return load_memory(
        session, conversation_id=conversation_id, settings=settings, conversation=conversation
    )


def get_memory(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> dict[str, Any]:
    """The snapshot: goal with subtasks and progress, phase, decisions, error patterns,
    stats."""
    return _read(session, settings, owner_id, conversation_id).snapshot()


def memory_context(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> str:
    """Seed 001's `get_context_for_agent()`: GOAL / KEY DECISIONS / … / RECENT ACTIONS
    within the memory's `max_context_tokens`."""
    return _read(session, settings, owner_id, conversation_id).get_context_for_agent()


def memory_stats(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> dict[str, Any]:
    """Seed 001's statistics (`total_actions`, …, `token_utilisation`, `error_alerts`)."""
    return _read(session, settings, owner_id, conversation_id).stats()


def export_memory(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> dict[str, Any]:
    """Seed 001's `save_state`: the whole memory as a JSON document."""
    return _read(session, settings, owner_id, conversation_id).export()


# ---------------------------------------------------------------- changes


def _change(
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    change: Callable[[HierarchicalMemory], T],
) -> T:
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    memory = load_memory(
        session, conversation_id=conversation_id, settings=settings, conversation=conversation
    )
    result = change(memory)
    _save(session, settings, conversation, memory)
    return result


def _checked_seqs(conversation: Conversation, seqs: Sequence[int]) -> list[int]:
    """`seqs` if each names a message of the conversation (ValidationFailed otherwise)."""
    outside = sorted({s for s in seqs if not 1 <= s <= conversation.last_seq})
    if outside:
        span = f"#1-#{conversation.last_seq}" if conversation.last_seq else "none yet"
        raise ValidationFailed(
            f"seqs name no message of this conversation: {', '.join(map(str, outside))} "
            f"(its messages: {span})",
            field="seqs",
        )
    return sorted(set(seqs))


def _change_with_seqs(
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    *,
    seqs: Sequence[int],
    change: Callable[[HierarchicalMemory, list[int]], T],
) -> T:
    """A change citing `seqs`, checked against the conversation (locked) first."""
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    checked = _checked_seqs(conversation, seqs)
    memory = load_memory(
        session, conversation_id=conversation_id, settings=settings, conversation=conversation
    )
    result = change(memory, checked)
    _save(session, settings, conversation, memory)
    return result


def _change_then_snapshot(
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    change: Callable[[HierarchicalMemory], object],
) -> dict[str, Any]:
    def run(memory: HierarchicalMemory) -> dict[str, Any]:
        change(memory)
        return memory.snapshot()

    return _change(session, settings, owner_id, conversation_id, run)


def set_goal(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    text: str,
    subtasks: list[str],
    seqs: Sequence[int] = (),
) -> dict[str, Any]:
    """The goal and its subtasks; `seqs`: the messages that state them."""

    def change(memory: HierarchicalMemory, cited: list[int]) -> dict[str, Any]:
        memory.set_goal(text, subtasks, seqs=cited)
        return memory.snapshot()

    return _change_with_seqs(session, settings, owner_id, conversation_id, seqs=seqs, change=change)


def set_phase(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str, phase: str
) -> dict[str, Any]:
    return _change_then_snapshot(
        session, settings, owner_id, conversation_id, lambda m: m.set_phase(phase)
    )


def add_decision(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    decision: str,
    rationale: str,
    impact: str,
    seqs: Sequence[int] = (),
) -> dict[str, Any]:
    """A decision on the trail; `impact` high, medium or low (ValidationFailed otherwise);
    `seqs`: the messages it came from."""

    def change(memory: HierarchicalMemory, cited: list[int]) -> dict[str, Any]:
        memory.add_decision(decision, rationale, impact, seqs=cited)
        return memory.snapshot()

    return _change_with_seqs(session, settings, owner_id, conversation_id, seqs=seqs, change=change)


def complete_subtask(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str, name: str
) -> dict[str, Any]:
    return _change_then_snapshot(
        session, settings, owner_id, conversation_id, lambda m: m.complete_subtask(name)
    )


def add_action(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    action_type: str,
    content: str,
    success: bool | None,
    metadata: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Seed 001's `add_action`: the action as recorded (id, importance, …) and the
    statistics after it (a compression shows in `compression_events`)."""

    def record(memory: HierarchicalMemory) -> dict[str, Any]:
        action = memory.add_action(action_type, content, success, metadata)
        return {"action": asdict(action), "stats": memory.stats()}

    return _change(session, settings, owner_id, conversation_id, record)


def track_error(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    error: str,
    seqs: Sequence[int] = (),
) -> dict[str, Any]:
    """Seed 001's `track_error_pattern`: `{"pattern", "count", "alert", "last_seen"}`
    (numbers → N, lowercase; `alert` from the third occurrence); `seqs`: the messages
    it was seen in."""
    return _change_with_seqs(
        session,
        settings,
        owner_id,
        conversation_id,
        seqs=seqs,
        change=lambda m, cited: m.track_error_pattern(error, seqs=cited),
    )


def reset_memory(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> None:
    """Forget everything but the options (seed 001's reset)."""
    _change(session, settings, owner_id, conversation_id, lambda m: m.reset())


def import_memory(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    document: Any,
) -> dict[str, Any]:
    """Seed 001's `load_state`: replace the memory with an exported one (or the memory of
    a private-data checkpoint); ValidationFailed names the first bad field. The imported
    options become the conversation's `memory_options` when they differ from those in
    force, so the memory is exactly the one exported."""
    conversation = owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=True
    )
    imported = HierarchicalMemory.import_state(document)
    if imported.options != options_in_force(conversation, settings):
        q.update_conversation(
            session,
            conversation=conversation,
            data={"memory_options": imported.options.to_dict()},
        )
    _save(session, settings, conversation, imported)
    return imported.snapshot()
