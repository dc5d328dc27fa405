"""`client.memory`: a conversation's hierarchical working memory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from contextq_client import models as m
from contextq_client.routing import JsonObject, route, seg
from contextq_client.transport import Resource, SyncTransport


def _memory(conversation_id: str, tail: str = "") -> str:
    return f"/v1/conversations/{seg(conversation_id)}/memory{tail}"


def _with_seqs(payload: JsonObject, seqs: Sequence[int] | None) -> JsonObject:
    """The body with `seqs` (the source messages) when given; the API checks them."""
    if seqs is not None:
        payload["seqs"] = list(seqs)
    return payload


class Memory(Resource[SyncTransport]):
    """A conversation's hierarchical working memory (goal, subtasks, decisions, errors).
    Snapshot and statistics are typed; the other answers are returned as dicts."""

    @route("GET", "/v1/conversations/{conversation_id}/memory")
    def get(self, conversation_id: str) -> m.MemorySnapshot:
        response = self._t.request("GET", _memory(conversation_id))
        return m.MemorySnapshot.model_validate(response.json())

    @route("DELETE", "/v1/conversations/{conversation_id}/memory")
    def reset(self, conversation_id: str) -> None:
        self._t.request("DELETE", _memory(conversation_id))

    @route("GET", "/v1/conversations/{conversation_id}/memory/context")
    def context(self, conversation_id: str) -> m.MemoryContext:
        response = self._t.request("GET", _memory(conversation_id, "/context"))
        return m.MemoryContext.model_validate(response.json())

    @route("GET", "/v1/conversations/{conversation_id}/memory/stats")
    def stats(self, conversation_id: str) -> m.MemoryStats:
        response = self._t.request("GET", _memory(conversation_id, "/stats"))
        return m.MemoryStats.model_validate(response.json())

    @route("POST", "/v1/conversations/{conversation_id}/memory/actions")
    def add_action(
        self,
        conversation_id: str,
        *,
        action_type: str,
        content: str = "",
        success: bool | None = True,
        metadata: JsonObject | None = None,
    ) -> JsonObject:
        payload = {
            "action_type": action_type,
            "content": content,
            "success": success,
            "metadata": metadata,
        }
        response = self._t.request("POST", _memory(conversation_id, "/actions"), json=payload)
        answer: JsonObject = response.json()
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/errors")
    def track_error(
        self, conversation_id: str, error: str, *, seqs: Sequence[int] | None = None
    ) -> JsonObject:
        """Count an error under its pattern: `{"pattern", "count", "alert", "last_seen"}`.
        `seqs`: the messages it came from (summaries cite them as `(#12)`)."""
        path = _memory(conversation_id, "/errors")
        payload = _with_seqs({"error": error}, seqs)
        answer: JsonObject = self._t.request_json("POST", path, json=payload)
        return answer

    @route("GET", "/v1/conversations/{conversation_id}/memory/export")
    def export(self, conversation_id: str) -> JsonObject:
        answer: JsonObject = self._t.request_json("GET", _memory(conversation_id, "/export"))
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/import")
    def import_(self, conversation_id: str, document: JsonObject) -> JsonObject:
        path = _memory(conversation_id, "/import")
        answer: JsonObject = self._t.request_json("POST", path, json=document)
        return answer

    @route("PUT", "/v1/conversations/{conversation_id}/memory/goal")
    def set_goal(
        self,
        conversation_id: str,
        text: str,
        *,
        subtasks: list[str] | None = None,
        seqs: Sequence[int] | None = None,
    ) -> JsonObject:
        payload = _with_seqs({"text": text, "subtasks": subtasks or []}, seqs)
        path = _memory(conversation_id, "/goal")
        answer: JsonObject = self._t.request_json("PUT", path, json=payload)
        return answer

    @route("PUT", "/v1/conversations/{conversation_id}/memory/phase")
    def set_phase(self, conversation_id: str, phase: str) -> JsonObject:
        path = _memory(conversation_id, "/phase")
        answer: JsonObject = self._t.request_json("PUT", path, json={"phase": phase})
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/decisions")
    def add_decision(
        self,
        conversation_id: str,
        decision: str,
        *,
        rationale: str = "",
        impact: Literal["low", "medium", "high"] = "medium",
        seqs: Sequence[int] | None = None,
    ) -> JsonObject:
        payload = _with_seqs({"decision": decision, "rationale": rationale, "impact": impact}, seqs)
        path = _memory(conversation_id, "/decisions")
        answer: JsonObject = self._t.request_json("POST", path, json=payload)
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/subtasks/{name}/complete")
    def complete_subtask(self, conversation_id: str, name: str) -> JsonObject:
        path = _memory(conversation_id, f"/subtasks/{seg(name)}/complete")
        answer: JsonObject = self._t.request_json("POST", path)
        return answer
