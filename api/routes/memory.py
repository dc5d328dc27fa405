"""Routes: a conversation's hierarchical memory, seed 001's ContextManager over HTTP
(docs/history.md#compaction).

| seed 001                 | route                                              |
|--------------------------|----------------------------------------------------|
| get_context_for_agent()  | GET    …/memory/context → {"context": "<text>"}    |
| add_action(…)            | POST   …/memory/actions                            |
| track_error_pattern(e)   | POST   …/memory/errors {"error": …}                |
| (statistics)             | GET    …/memory/stats                              |
| reset()                  | DELETE …/memory                                    |
| save_state / load_state  | GET    …/memory/export, POST …/memory/import        |
| goal, phase, decisions   | PUT …/memory/goal, PUT …/memory/phase,             |
|                          | POST …/memory/decisions, …/subtasks/{name}/complete|
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Response

from api.deps import OwnerDep, SettingsDep, read, write
from api.responses import json_response
from api.schemas.context import MemorySnapshot, MemoryStats
from api.schemas.history import ActionIn, DecisionIn, ErrorIn, GoalIn, MemoryContext, PhaseIn
from service import history

router = APIRouter(tags=["memory"])

BASE = "/conversations/{conversation_id}/memory"


@router.get(BASE, response_model=MemorySnapshot)
async def get_memory(conversation_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """Goal with subtasks and progress, phase, decisions, error patterns, stats."""
    snapshot = await read(
        history.get_memory, settings=settings, owner_id=owner_id, conversation_id=conversation_id
    )
    return json_response(snapshot)


@router.delete(BASE, status_code=204)
async def reset_memory(conversation_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """Forget the goal, phase, decisions, error patterns and actions (the options stay)."""
    await write(
        history.reset_memory, settings=settings, owner_id=owner_id, conversation_id=conversation_id
    )
    return Response(status_code=204)


@router.get(BASE + "/context", response_model=MemoryContext)
async def memory_context(
    conversation_id: str, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """The agent's memory text: GOAL, KEY DECISIONS, ERROR PATTERNS, PREVIOUS ACTIONS,
    RECENT ACTIONS, within the memory's `max_context_tokens`."""
    text = await read(
        history.memory_context,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
    )
    return json_response(MemoryContext(context=text))


@router.get(BASE + "/stats", response_model=MemoryStats)
async def memory_stats(conversation_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """`total_actions`, `working_memory_size`, `compression_events`, `decisions_made`,
    `token_utilisation`, `iterations_completed`, `error_alerts`."""
    stats = await read(
        history.memory_stats, settings=settings, owner_id=owner_id, conversation_id=conversation_id
    )
    return json_response(stats)


@router.post(BASE + "/actions", status_code=201)
async def add_action(
    conversation_id: str, body: ActionIn, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """Record an action; answers it as recorded (id, importance, …) and the stats."""
    recorded = await write(
        history.add_action,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        action_type=body.action_type,
        content=body.content,
        success=body.success,
        metadata=body.metadata,
    )
    return json_response(recorded, 201)


@router.post(BASE + "/errors")
async def track_error(
    conversation_id: str, body: ErrorIn, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """Count an error under its pattern: `{"pattern", "count", "alert", "last_seen"}`."""
    entry = await write(
        history.track_error,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        error=body.error,
        seqs=body.seqs,
    )
    return json_response(entry)


@router.get(BASE + "/export")
async def export_memory(
    conversation_id: str, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """The whole memory as a JSON document for `POST …/memory/import`."""
    document = await read(
        history.export_memory,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
    )
    return json_response(document)


@router.post(BASE + "/import")
async def import_memory(
    conversation_id: str,
    owner_id: OwnerDep,
    settings: SettingsDep,
    document: dict[str, Any] = Body(...),  # noqa: B008  FastAPI's way to take any object
) -> Response:
    """Replace the memory with an export or a private-data checkpoint; the snapshot."""
    snapshot = await write(
        history.import_memory,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        document=document,
    )
    return json_response(snapshot)


@router.put(BASE + "/goal")
async def set_goal(
    conversation_id: str, body: GoalIn, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    snapshot = await write(
        history.set_goal,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        text=body.text,
        subtasks=body.subtasks,
        seqs=body.seqs,
    )
    return json_response(snapshot)


@router.put(BASE + "/phase")
async def set_phase(
    conversation_id: str, body: PhaseIn, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    snapshot = await write(
        history.set_phase,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        phase=body.phase,
    )
    return json_response(snapshot)


@router.post(BASE + "/decisions", status_code=201)
async def add_decision(
    conversation_id: str, body: DecisionIn, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    """A decision with its rationale and `impact` (high, medium — the default — or low)."""
    snapshot = await write(
        history.add_decision,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        decision=body.decision,
        rationale=body.rationale,
        impact=body.impact,
        seqs=body.seqs,
    )
    return json_response(snapshot, 201)


@router.post(BASE + "/subtasks/{name}/complete")
async def complete_subtask(
    conversation_id: str, name: str, owner_id: OwnerDep, settings: SettingsDep
) -> Response:
    snapshot = await write(
        history.complete_subtask,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        name=name,
    )
    return json_response(snapshot)
