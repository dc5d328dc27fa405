"""Projects through the real queue: a real Valkey, a real `celery worker` subprocess, the API
under uvicorn, a real SQLite file and a real PostgreSQL (docs/projects.md, issue 9).

A project of real files — a 45-page PDF (fpdf2, distinct text per page), a DOCX
(python-docx), a CSV and a Markdown file — is uploaded into a project, processed and
indexed by the worker; the page-40 question finds page 40's chunk over HTTP; the P slot's
`project_documents` gives the files whole for a large share and the page-40 chunk for a
gpt-4-sized one; a file moved in after processing is indexed by the `index_file` task;
moving out, deleting a file and deleting the project take their chunks out of search.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from contextq.settings import get_settings
from service import projects
from store.db import read_session
from store.project_tables import ChunkRow
from tests.support.db import all_rows
from tests.support.files import upload, wait_file_done
from tests.support.project_files import (
    CSV_FACT_ROW,
    DOCX_FACT,
    FACT,
    FACT_PAGE,
    FACT_QUESTION,
    MARKDOWN_FACT,
    pdf_bytes,
    project_files,
)

pytestmark = pytest.mark.integration

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _search(client: Any, project_id: str, q: str, limit: int = 5) -> list[dict[str, Any]]:
    resp = client.get(f"/v1/projects/{project_id}/search", params={"q": q, "limit": limit})
    assert resp.status_code == 200, resp.text
    data: list[dict[str, Any]] = resp.json()["data"]
    return data


def _documents(owner: Any, project_id: str, budget: int, model: str) -> Any:
    with read_session() as s:
        return projects.project_documents(
            session=s, settings=get_settings(), owner_id=owner.owner_id, project_id=project_id,
            query=FACT_QUESTION, budget_tokens=budget, model=model,
        )  # fmt: skip


def _wait_indexed(client: Any, file_id: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v1/files/{file_id}").json()
        if body["metadata"].get("index", {}).get("status", "running") != "running":
            return body
        time.sleep(0.05)
    raise TimeoutError(f"file {file_id} was not indexed within {timeout}s")


@BOTH_BACKENDS
def test_a_project_of_real_files_through_the_real_queue(stack, worker, client, owner) -> None:
    project = client.post("/v1/projects", json={"name": "plant", "instructions": "Cite."})
    assert project.status_code == 201
    project_id = project.json()["id"]
    uploaded = {
        name: upload(client, name, data, content_type=ctype, project_id=project_id)
        for name, (data, ctype) in project_files(45).items()
    }
    files = {name: wait_file_done(client, body["id"]) for name, body in uploaded.items()}
    for name, f in files.items():
        assert f["status"] == "ready", f
        # indexed by the worker before it was written ready: searchable as soon as ready
        assert f["metadata"]["index"]["status"] == "indexed", name
        assert f["metadata"]["index"]["complete"] is True
    pdf = files["manual.pdf"]
    assert pdf["metadata"]["pages"] == 45 and pdf["truncation"]["truncated"] is True
    assert pdf["metadata"]["index"]["chunks"] >= 45

    got = client.get(f"/v1/projects/{project_id}").json()
    assert (got["file_count"], got["ready_count"]) == (4, 4)
    assert got["token_count"] == sum(f["processed_token_count"] for f in files.values())
    assert got["chunk_count"] == sum(f["metadata"]["index"]["chunks"] for f in files.values())

    top = _search(client, project_id, FACT_QUESTION)[0]
    assert (top["file_id"], top["chunk"]["page"]) == (pdf["id"], FACT_PAGE)
    assert FACT in top["text"]
    assert DOCX_FACT in _search(client, project_id, "Quillfeather register")[0]["text"]
    assert CSV_FACT_ROW[1] in _search(client, project_id, "Zephyrine gasket")[0]["text"]
    assert MARKDOWN_FACT in _search(client, project_id, "Brimblecombe daemon")[0]["text"]

    # the P slot: a large share holds every file whole; a gpt-4-sized one the best chunks
    whole = _documents(owner, project_id, budget=60_000, model="gpt-4o")
    assert whole.mode == "whole"
    assert {d.file_id for d in whole.documents} == {f["id"] for f in files.values()}
    small = _documents(owner, project_id, budget=2_500, model="gpt-4")
    assert small.mode == "chunks" and small.token_count <= 2_500
    first = small.documents[0]
    assert first.file_id == pdf["id"] and first.chunk is not None
    assert first.chunk.page == FACT_PAGE and FACT in first.contents

    # deleting a file removes its chunks: search no longer finds them
    before = len(all_rows(ChunkRow))
    assert client.delete(f"/v1/files/{pdf['id']}").status_code == 204
    assert len(all_rows(ChunkRow)) == before - pdf["metadata"]["index"]["chunks"]
    assert all(h["file_id"] != pdf["id"] for h in _search(client, project_id, FACT_QUESTION))
    assert client.get(f"/v1/projects/{project_id}").json()["file_count"] == 3

    # deleting the project deletes its files and every chunk
    assert client.delete(f"/v1/projects/{project_id}").status_code == 204
    assert all_rows(ChunkRow) == []
    for f in files.values():
        assert client.get(f"/v1/files/{f['id']}").status_code == 404


def test_moving_files_in_and_out_through_the_real_queue(stack, worker, client) -> None:
    project_id = client.post("/v1/projects", json={"name": "moves"}).json()["id"]
    loose = wait_file_done(client, upload(client, "manual.pdf", pdf_bytes(45))["id"])
    assert loose["status"] == "ready" and "index" not in loose["metadata"]
    assert _search(client, project_id, FACT_QUESTION) == []

    moved = client.patch(f"/v1/files/{loose['id']}", json={"project_id": project_id})
    assert moved.status_code == 200 and moved.json()["project_id"] == project_id
    indexed = _wait_indexed(client, loose["id"])  # the index_file task, in the worker
    assert indexed["status"] == "ready"
    assert indexed["metadata"]["index"]["status"] == "indexed"
    assert _search(client, project_id, FACT_QUESTION)[0]["chunk"]["page"] == FACT_PAGE

    out = client.patch(f"/v1/files/{loose['id']}", json={"project_id": None})
    assert out.status_code == 200 and out.json()["project_id"] is None
    assert _search(client, project_id, FACT_QUESTION) == []
    back = client.patch(f"/v1/files/{loose['id']}", json={"project_id": project_id})
    assert back.status_code == 200  # already indexed: found again at once
    assert _search(client, project_id, FACT_QUESTION)[0]["file_id"] == loose["id"]
    assert (
        client.get(f"/v1/projects/{project_id}").json()["chunk_count"]
        == (indexed["metadata"]["index"]["chunks"])
    )


def test_hostile_queries_through_the_real_server(stack, worker, client) -> None:
    project_id = client.post("/v1/projects", json={"name": "hostile"}).json()["id"]
    empty_id = client.post("/v1/projects", json={"name": "empty"}).json()["id"]
    f = upload(client, "manual.pdf", pdf_bytes(45), project_id=project_id)
    assert wait_file_done(client, f["id"])["status"] == "ready"
    for q in ('"', "*", "NEAR(", "-", 'NEAR("torque" -wrench*', "torque " * 1666 + "Halvorsen"):
        for pid in (project_id, empty_id):
            resp = client.get(f"/v1/projects/{pid}/search", params={"q": q})
            assert resp.status_code == 200, (q[:40], resp.text)
            assert isinstance(resp.json()["data"], list)
    long_q = _search(client, project_id, "torque " * 1666 + "Halvorsen")  # 10 005 characters
    assert long_q and long_q[0]["chunk"]["page"] == FACT_PAGE
    assert _search(client, empty_id, FACT_QUESTION) == []
