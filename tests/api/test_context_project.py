"""The project slot (P, docs/projects.md) through the API: seed 003's flow 2 with a real
project, a conversation's project_id checked, files still processing listed as pending.
Files are processed (and indexed) by the worker's own function; the real queue is in
`tests/integration/test_project_context.py`. Every answer passes `context_checks.check`
(SDK types, an independent recount)."""

from __future__ import annotations

import json
from typing import Any

from contextq.settings import get_settings
from service.files.processing import process_file
from tests.api.context_checks import check, labels
from tests.support.files import upload

CA = "CA: follow the house style."
INSTRUCTIONS = "P: answer from the plant's handbook."
NAMES = {"U1": "U1", "U2": "U2", "A1": "A1", "CA:": "CA", "P:": "P"}


def _context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    check(answer)
    return answer


def _post(client: Any, cid: str, *messages: dict[str, Any]) -> None:
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": list(messages)})
    assert r.status_code == 201, r.text


def _project(client: Any) -> str:
    r = client.post("/v1/projects", json={"name": "plant", "instructions": INSTRUCTIONS})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _ready(client: Any, name: str, data: bytes, **target: str) -> str:
    file_id = str(upload(client, name, data, **target)["id"])
    process_file(settings=get_settings(), file_id=file_id)  # the worker's own function
    assert client.get(f"/v1/files/{file_id}").json()["status"] == "ready"
    return file_id


def _p_documents(text: str) -> list[dict[str, Any]]:
    assert text.startswith(INSTRUCTIONS)
    documents: list[dict[str, Any]] = json.loads(text[len(INSTRUCTIONS) :])["documents"]
    return documents


def test_seed_003_flow_2_with_a_real_project(app_client: Any) -> None:
    pid = _project(app_client)
    handbook = _ready(app_client, "handbook.md", b"# Handbook\n\nThe gate code is ORCA-7.\n",
                      project_id=pid)  # fmt: skip
    cid = app_client.post(
        "/v1/conversations",
        json={"model": "gpt-4o", "custom_agent_prompt": CA, "project_id": pid},
    ).json()["id"]
    notes = _ready(app_client, "notes.md", b"# Notes\n\nThe sentinel is KIWI-42.\n")
    _post(app_client, cid, {"role": "user", "content": "U1 read my notes", "file_ids": [notes]})
    first = _context(app_client, cid)
    assert labels(first, NAMES) == ["S", "CA", "P", "F", "U1"]
    _post(app_client, cid, {"role": "assistant", "content": "A1 done."})
    _post(app_client, cid, {"role": "user", "content": "U2 and the gate code?"})
    second = _context(app_client, cid)
    assert labels(second, NAMES) == ["S", "F", "U1", "A1", "CA", "P", "U2"]
    documents = _p_documents(second["messages"][5]["content"])
    assert [d["title"] for d in documents] == ["handbook.md"]
    assert "ORCA-7" in documents[0]["contents"]
    project_id = documents[0]["citation_id"]
    # the P slot's citation is stable and separate from the turn's file's
    by_source = {c["source"]: c for c in second["citations"]}
    assert by_source["project"] == {
        "citation_id": project_id, "file_id": handbook, "title": "handbook.md",
        "source": "project", "chunk": None,
    }  # fmt: skip
    assert by_source["file"]["file_id"] == notes and by_source["file"]["citation_id"] != project_id
    assert second["token_breakdown"]["project"] > 0
    again = _context(app_client, cid)
    assert again["citations"] == second["citations"]
    anthropic = _context(app_client, cid, format="anthropic")
    assert labels(anthropic, NAMES) == ["S", "F+U1", "A1", "CA+P+U2"]
    assert anthropic["citations"] == second["citations"]


def test_a_project_file_still_processing_is_listed_as_pending(app_client: Any) -> None:
    pid = _project(app_client)
    ready = _ready(app_client, "ready.md", b"# Ready\n\nThe code word is HERON.\n", project_id=pid)
    waiting = upload(app_client, "later.md", b"# Later\n\ntext\n", project_id=pid)["id"]
    cid = app_client.post("/v1/conversations", json={"project_id": pid}).json()["id"]
    _post(app_client, cid, {"role": "user", "content": "U1 the code word?"})
    for fmt in ("openai", "anthropic"):
        answer = _context(app_client, cid, format=fmt)
        assert answer["pending_file_ids"] == [waiting]
        (note,) = answer["file_notes"]
        assert note["file_id"] == waiting and "still uploaded" in note["reason"]
        assert [c["file_id"] for c in answer["citations"]] == [ready]


def test_a_conversation_names_only_its_owners_project(
    app_client: Any, make_owner: Any, stack: Any
) -> None:
    from tests.support.api import in_process_client

    pid = _project(app_client)
    bad = app_client.post("/v1/conversations", json={"project_id": "no-such-project"})
    assert bad.status_code == 404 and "project not found" in bad.text
    cid = app_client.post("/v1/conversations", json={}).json()["id"]
    assert app_client.patch(f"/v1/conversations/{cid}", json={"project_id": pid}).status_code == 200
    with in_process_client(make_owner("mallory").key) as other:
        foreign = other.post("/v1/conversations", json={"project_id": pid})
        assert foreign.status_code == 404 and "project not found" in foreign.text
        own = other.post("/v1/conversations", json={}).json()["id"]
        moved = other.patch(f"/v1/conversations/{own}", json={"project_id": pid})
        assert moved.status_code == 404
    # a project deleted since: the context has no P, and still answers
    assert app_client.delete(f"/v1/projects/{pid}").status_code == 204
    _post(app_client, cid, {"role": "user", "content": "U1 hello"})
    answer = _context(app_client, cid)
    assert answer["token_breakdown"]["project"] == 0 and answer["citations"] == []
