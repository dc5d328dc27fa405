"""The projects API in-process (FastAPI TestClient) over a real SQLite file and a real
Valkey: create, list, read with counts, change, delete, move files, search, owner
isolation, hostile input. Files are processed by the worker's use case in this process
where a test needs them ready (tests/integration runs real workers)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextq.settings import get_settings
from service import files as fs
from store.project_tables import ChunkRow, Project
from store.tables import File
from tests.support.api import in_process_client
from tests.support.db import all_rows, get_row
from tests.support.files import upload
from tests.support.project_files import (
    FACT,
    FACT_PAGE,
    FACT_QUESTION,
    HANDBOOK_ANSWER_PAGE,
    HANDBOOK_QUESTION,
    handbook_pdf_bytes,
    pdf_bytes,
)

PROJECT_ROUTES = [
    ("GET", "/v1/projects/{id}", None),
    ("PATCH", "/v1/projects/{id}", {"name": "mine now"}),
    ("DELETE", "/v1/projects/{id}", None),
    ("GET", "/v1/projects/{id}/search?q=torque", None),
]


def _create(client, name: str = "handbook", **body) -> dict:
    resp = client.post("/v1/projects", json={"name": name, **body})
    assert resp.status_code == 201, resp.text
    return resp.json()


def _ready(client, project_id: str | None, name: str, data: bytes) -> dict:
    """Upload through the API, process with the worker's use case, return the File."""
    body = upload(client, name, data, project_id=project_id)
    fs.process_file(settings=get_settings(), file_id=body["id"])
    resp = client.get(f"/v1/files/{body['id']}")
    assert resp.json()["status"] == "ready", resp.text
    return resp.json()


def test_create_get_list_patch_delete(stack, app_client) -> None:
    created = _create(app_client, "  Plant manuals ", instructions="Cite pages.")
    assert list(created) == [
        "id", "name", "instructions", "file_count", "ready_count", "token_count",
        "chunk_count", "created_at", "updated_at",
    ]  # fmt: skip
    assert (created["name"], created["instructions"]) == ("Plant manuals", "Cite pages.")
    assert [created[k] for k in ("file_count", "ready_count", "token_count", "chunk_count")] == [
        0, 0, 0, 0,
    ]  # fmt: skip
    assert created["created_at"].endswith(("Z", "+00:00"))
    assert app_client.get(f"/v1/projects/{created['id']}").json() == created

    resp = app_client.patch(f"/v1/projects/{created['id']}", json={"instructions": None})
    assert resp.status_code == 200
    assert (resp.json()["name"], resp.json()["instructions"]) == ("Plant manuals", None)
    resp = app_client.patch(f"/v1/projects/{created['id']}", json={"name": "Renamed"})
    assert resp.json()["name"] == "Renamed" and resp.json()["instructions"] is None

    assert app_client.delete(f"/v1/projects/{created['id']}").status_code == 204
    assert app_client.get(f"/v1/projects/{created['id']}").status_code == 404
    assert app_client.delete(f"/v1/projects/{created['id']}").status_code == 404


def test_list_is_newest_first_with_a_cursor(stack, app_client) -> None:
    ids = [_create(app_client, f"p{i}")["id"] for i in range(5)]
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = app_client.get("/v1/projects", params=params).json()
        seen += [p["id"] for p in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and seen == list(reversed(ids))
    for bad in ({"cursor": "!!"}, {"cursor": "bm9wZQ"}, {"limit": 0}, {"limit": 201}):
        assert app_client.get("/v1/projects", params=bad).status_code == 422, bad


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "a" * 201}, "name"),
        ({"name": "tab\there"}, "control"),
        ({"name": "ok", "instructions": "x\x00y"}, "NUL"),
        ({"name": "ok", "instructions": "x" * 100_001}, "instructions"),
        ({"name": "ok", "colour": "red"}, "colour"),
        ({"name": 5}, "name"),
    ],
)
def test_bad_bodies_are_422_naming_the_field(stack, app_client, body, needle) -> None:
    resp = app_client.post("/v1/projects", json=body)
    assert resp.status_code == 422, resp.text
    assert needle in resp.text
    project = _create(app_client)
    patched = app_client.patch(f"/v1/projects/{project['id']}", json={**body, "name": None})
    assert patched.status_code == 422


def test_get_reports_the_counts_of_its_files(stack, app_client) -> None:
    project = _create(app_client)
    pdf = _ready(app_client, project["id"], "manual.pdf", pdf_bytes(45))
    note = _ready(app_client, project["id"], "note.txt", b"a short note\n")
    upload(app_client, "waiting.txt", b"not processed yet\n", project_id=project["id"])
    _ready(app_client, None, "elsewhere.txt", b"in no project\n")
    got = app_client.get(f"/v1/projects/{project['id']}").json()
    assert (got["file_count"], got["ready_count"]) == (3, 2)
    assert got["token_count"] == pdf["processed_token_count"] + note["processed_token_count"]
    chunks = pdf["metadata"]["index"]["chunks"] + note["metadata"]["index"]["chunks"]
    assert got["chunk_count"] == chunks and chunks >= 46
    listed = app_client.get("/v1/projects").json()["data"]
    assert listed == [got]


def test_upload_and_move_need_the_owners_project(stack, app_client, owner) -> None:
    missing = upload(app_client, "a.txt", b"x\n", project_id="0" * 32, expect=404)
    assert missing == {"detail": "project not found"}
    project = _create(app_client)
    file_id = upload(app_client, "a.txt", b"x\n")["id"]
    resp = app_client.patch(f"/v1/files/{file_id}", json={"project_id": project["id"]})
    assert resp.status_code == 200 and resp.json()["project_id"] == project["id"]
    assert get_row(File, file_id).project_id == project["id"]
    assert app_client.get("/v1/projects/" + project["id"]).json()["file_count"] == 1
    resp = app_client.patch(f"/v1/files/{file_id}", json={"project_id": None})
    assert resp.status_code == 200 and resp.json()["project_id"] is None
    for body, status in (
        ({"project_id": "0" * 32}, 404),
        ({}, 422),
        ({"project_id": 7}, 422),
        ({"project_id": "p" * 65}, 422),
        ({"conversation_id": "c"}, 422),
    ):
        resp = app_client.patch(f"/v1/files/{file_id}", json=body)
        assert resp.status_code == status, (body, resp.text)
    assert app_client.patch("/v1/files/" + "0" * 32, json={"project_id": None}).status_code == 404


def test_moving_a_ready_file_in_sends_index_file_after_the_commit(stack, app_client) -> None:
    project = _create(app_client)
    ready = _ready(app_client, None, "manual.txt", b"torque wrench settings\n" * 20)
    r = redis.Redis.from_url(stack.redis_url)
    r.delete("files")
    app_client.patch(f"/v1/files/{ready['id']}", json={"project_id": project["id"]})
    messages = [m for m in r.lrange("files", 0, -1)]
    assert len(messages) == 1 and b"contextq.index_file" in messages[0]
    assert ready["id"].encode() in messages[0]
    # moving a file still uploaded sends nothing: its processing will index it
    waiting = upload(app_client, "w.txt", b"w\n")["id"]
    r.delete("files")
    app_client.patch(f"/v1/files/{waiting}", json={"project_id": project["id"]})
    assert r.lrange("files", 0, -1) == []


def test_search_finds_page_40_and_deleting_removes_the_chunks(stack, app_client) -> None:
    project = _create(app_client)
    pdf = _ready(app_client, project["id"], "manual.pdf", pdf_bytes(45))
    resp = app_client.get(f"/v1/projects/{project['id']}/search", params={"q": FACT_QUESTION})
    assert resp.status_code == 200
    body = resp.json()
    assert body["next_cursor"] is None and 1 <= len(body["data"]) <= 10
    top = body["data"][0]
    assert list(top) == ["chunk_id", "file_id", "title", "text", "score", "chunk"]
    assert (top["file_id"], top["title"]) == (pdf["id"], "manual.pdf")
    assert top["chunk"]["page"] == FACT_PAGE and FACT in top["text"]
    assert [h["score"] for h in body["data"]] == sorted(
        (h["score"] for h in body["data"]), reverse=True
    )
    limited = app_client.get(
        f"/v1/projects/{project['id']}/search", params={"q": "page", "limit": 3}
    )
    assert len(limited.json()["data"]) == 3

    assert app_client.delete(f"/v1/files/{pdf['id']}").status_code == 204
    assert all_rows(ChunkRow) == []
    again = app_client.get(f"/v1/projects/{project['id']}/search", params={"q": FACT_QUESTION})
    assert again.json() == {"data": [], "next_cursor": None}


def test_deleting_a_project_deletes_its_files_and_their_chunks(stack, app_client) -> None:
    project = _create(app_client)
    inside = [
        _ready(app_client, project["id"], "manual.pdf", pdf_bytes(6)),
        _ready(app_client, project["id"], "notes.md", b"# Notes\n\nbrass fittings\n"),
    ]
    outside = _ready(app_client, None, "keep.txt", b"keep me\n")
    assert all_rows(ChunkRow)
    assert app_client.delete(f"/v1/projects/{project['id']}").status_code == 204
    for f in inside:
        assert app_client.get(f"/v1/files/{f['id']}").status_code == 404
    assert all_rows(ChunkRow) == [] and all_rows(Project) == []
    assert app_client.get(f"/v1/files/{outside['id']}").status_code == 200


def test_another_owners_projects_answer_404_everywhere(
    stack, app_client, owner, make_owner
) -> None:
    project = _create(app_client)
    alice_file = _ready(app_client, project["id"], "manual.pdf", pdf_bytes(45))
    bob = make_owner("bob")
    with in_process_client(bob.key) as b:
        for method, path, body in PROJECT_ROUTES:
            resp = b.request(method, path.format(id=project["id"]), json=body)
            assert (resp.status_code, resp.json()) == (404, {"detail": "project not found"})
            missing = b.request(method, path.format(id="0" * 32), json=body)
            assert (missing.status_code, missing.json()) == (404, resp.json())
        assert b.get("/v1/projects").json() == {"data": [], "next_cursor": None}
        assert upload(b, "b.txt", b"b\n", project_id=project["id"], expect=404)
        bob_file = upload(b, "b.txt", b"b\n")["id"]
        resp = b.patch(f"/v1/files/{bob_file}", json={"project_id": project["id"]})
        assert resp.status_code == 404
        # alice's file cannot be moved by bob either
        resp = b.patch(f"/v1/files/{alice_file['id']}", json={"project_id": None})
        assert (resp.status_code, resp.json()) == (404, {"detail": "file not found"})
        bob_project = _create(b, "bob's")["id"]
        resp = app_client.patch(f"/v1/files/{alice_file['id']}", json={"project_id": bob_project})
        assert resp.status_code == 404
        # bob's own project searches only bob's files
        hits = b.get(f"/v1/projects/{bob_project}/search", params={"q": FACT_QUESTION}).json()
        assert hits["data"] == []
    # alice's project is untouched
    got = app_client.get(f"/v1/projects/{project['id']}").json()
    assert got["name"] == "handbook" and got["file_count"] == 1
    hits = app_client.get(f"/v1/projects/{project['id']}/search", params={"q": FACT_QUESTION})
    assert hits.json()["data"][0]["chunk"]["page"] == FACT_PAGE


HOSTILE = [
    "",
    '"',
    '""""',
    "*",
    "torque*",
    "NEAR(",
    "NEAR(torque wrench, 2)",
    "-",
    "-torque",
    "torque -wrench",
    "torque AND OR NOT",
    "col:torque",
    "^torque",
    "'; DROP TABLE chunks; --",
    "(torque",
    "\\",
    "é ß 日本語 🔧",
    "Halvorsen " * 1000,  # 10 000 characters
    "x" * 10_000,
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_give_results_or_an_empty_list(stack, app_client, query) -> None:
    project = _create(app_client)
    empty = _create(app_client, "empty")
    _ready(app_client, project["id"], "manual.pdf", pdf_bytes(45))
    for target in (project, empty):
        resp = app_client.get(f"/v1/projects/{target['id']}/search", params={"q": query})
        assert resp.status_code == 200, resp.text
        assert isinstance(resp.json()["data"], list)
    assert app_client.get(f"/v1/projects/{empty['id']}/search", params={"q": query}).json() == {
        "data": [], "next_cursor": None,
    }  # fmt: skip
    if "Halvorsen" in query:
        top = app_client.get(f"/v1/projects/{project['id']}/search", params={"q": query})
        assert top.json()["data"][0]["chunk"]["page"] == FACT_PAGE


def test_search_parameters_are_checked(stack, app_client) -> None:
    project = _create(app_client)
    url = f"/v1/projects/{project['id']}/search"
    assert app_client.get(url).json() == {"data": [], "next_cursor": None}  # no q: nothing
    for params in (
        {"q": "x", "limit": 0},
        {"q": "x", "limit": 101},
        {"q": "x" * 20_001},
        {"q": "x", "mode": "fuzzy"},
    ):
        assert app_client.get(url, params=params).status_code == 422, params


def test_the_modes_a_paraphrased_question_is_found_by_hybrid_not_by_bm25(stack, app_client) -> None:
    project = _create(app_client)
    _ready(app_client, project["id"], "handbook.pdf", handbook_pdf_bytes())
    url = f"/v1/projects/{project['id']}/search"
    pages = {}
    for mode in ("hybrid", "dense", "bm25", None):
        params = {"q": HANDBOOK_QUESTION, "limit": 3} | ({"mode": mode} if mode else {})
        resp = app_client.get(url, params=params)
        assert resp.status_code == 200, resp.text
        pages[mode] = [h["chunk"]["page"] for h in resp.json()["data"]]
    assert pages["hybrid"][0] == pages["dense"][0] == HANDBOOK_ANSWER_PAGE
    assert pages[None] == pages["hybrid"]  # hybrid is the default
    assert HANDBOOK_ANSWER_PAGE not in pages["bm25"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(project_id=st.text(max_size=120), query=st.text(max_size=300))
def test_random_ids_and_queries_never_5xx(stack, app_client, project_id, query) -> None:
    pid = quote(project_id, safe="")
    for method, path in (
        ("GET", f"/v1/projects/{pid}"),
        ("DELETE", f"/v1/projects/{pid}"),
        ("GET", f"/v1/projects/{pid}/search?q={quote(query, safe='')}"),
    ):
        resp = app_client.request(method, path)
        assert resp.status_code < 500, (method, path, resp.text)
