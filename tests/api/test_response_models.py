"""Real answers of the context and memory routes against their documented models
(`api/schemas/context.py`), unknown fields forbidden: the OpenAPI document that typed
clients are built from cannot drift from what the routes send."""

from __future__ import annotations

from typing import Any

import pytest

from api.schemas.context import ContextAnswer, MemorySnapshot, MemoryStats
from contextq.assembly.formats import FORMATS
from contextq.history.types import FORMAT_NAMES
from tests.support.files import upload


def _conversation(client: Any) -> str:
    cid = client.post(
        "/v1/conversations",
        json={"model": "gpt-4o", "reminders": ["be brief"], "custom_agent_prompt": "agent"},
    ).json()["id"]
    pending = upload(client, "notes.txt", b"not processed: no worker here\n", conversation_id=cid)
    turns = [
        {"role": "user", "content": f"question {i}", "file_ids": [pending["id"]] if i == 9 else []}
        for i in range(10)
    ]
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": turns})
    assert r.status_code == 201, r.text
    return str(cid)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_context_answer_matches_its_model(app_client: Any, fmt: str) -> None:
    cid = _conversation(app_client)
    answer = app_client.get(
        f"/v1/conversations/{cid}/context", params={"format": fmt, "force_filter": "true"}
    ).json()
    parsed = ContextAnswer.model_validate(answer)
    assert parsed.file_notes and parsed.pending_file_ids == [parsed.file_notes[0].file_id]
    assert sum(parsed.token_breakdown.model_dump().values()) == parsed.token_count
    assert (parsed.system is not None) == (fmt == "anthropic")
    assert answer[FORMATS[fmt].list_key], "the format's list is there"
    schema = app_client.get("/openapi.json").json()
    ok = schema["paths"]["/v1/conversations/{conversation_id}/context"]["get"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ContextAnswer"
    }


def test_memory_snapshot_and_stats_match_their_models(app_client: Any) -> None:
    cid = _conversation(app_client)
    base = f"/v1/conversations/{cid}/memory"
    app_client.put(f"{base}/goal", json={"text": "ship it", "subtasks": ["a", "b"]})
    app_client.post(f"{base}/subtasks/a/complete")
    app_client.post(f"{base}/decisions", json={"decision": "use X", "rationale": "fast"})
    for n in range(3):
        app_client.post(f"{base}/errors", json={"error": f"timeout after {n} s"})
    snapshot = MemorySnapshot.model_validate(app_client.get(base).json())
    assert snapshot.goal.progress == 0.5 and snapshot.error_patterns[0].alert
    MemoryStats.model_validate(app_client.get(f"{base}/stats").json())
