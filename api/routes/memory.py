"""Routes: a conversation's hierarchical memory (SPEC §2 "Compaction and jobs")."""

from __future__ import annotations

from fastapi import APIRouter, Response

from api.deps import OwnerDep, read, write
from api.responses import json_response
from api.schemas.history import DecisionIn, GoalIn, PhaseIn
from service import history

router = APIRouter(tags=["memory"])

BASE = "/conversations/{conversation_id}/memory"


@router.get(BASE)
async def get_memory(conversation_id: str, owner_id: OwnerDep) -> Response:
    """Goal with subtasks and progress, phase, decisions, error patterns, stats."""
    snapshot = await read(history.get_memory, owner_id=owner_id, conversation_id=conversation_id)
    return json_response(snapshot)


@router.put(BASE + "/goal")
async def set_goal(conversation_id: str, body: GoalIn, owner_id: OwnerDep) -> Response:
    snapshot = await write(
        history.set_goal,
        owner_id=owner_id,
        conversation_id=conversation_id,
        text=body.text,
        subtasks=body.subtasks,
    )
    return json_response(snapshot)


@router.put(BASE + "/phase")
async def set_phase(conversation_id: str, body: PhaseIn, owner_id: OwnerDep) -> Response:
    snapshot = await write(
        history.set_phase, owner_id=owner_id, conversation_id=conversation_id, phase=body.phase
    )
    return json_response(snapshot)


@router.post(BASE + "/decisions", status_code=201)
async def add_decision(conversation_id: str, body: DecisionIn, owner_id: OwnerDep) -> Response:
    snapshot = await write(
        history.add_decision,
        owner_id=owner_id,
        conversation_id=conversation_id,
        decision=body.decision,
        rationale=body.rationale,
        impact=body.impact,
    )
    return json_response(snapshot, 201)


@router.post(BASE + "/subtasks/{name}/complete")
async def complete_subtask(conversation_id: str, name: str, owner_id: OwnerDep) -> Response:
    snapshot = await write(
        history.complete_subtask, owner_id=owner_id, conversation_id=conversation_id, name=name
    )
    return json_response(snapshot)
