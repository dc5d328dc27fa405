"""The files API in-process (FastAPI TestClient) over a real SQLite file and a real Valkey.

No worker runs here: rows stay `uploaded`, which is what these tests need.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from api.multipart import sanitize_filename
from store.tables import File
from tests.support.api import in_process_client
from tests.support.db import all_rows, get_row
from tests.support.files import multipart_body, upload, upload_raw, upload_targets
from tests.support.procs import free_port

ROUTES = [
    ("GET", "/v1/files/{id}"),
    ("GET", "/v1/files/{id}/content"),
    ("DELETE", "/v1/files/{id}"),
]


# --- auth --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer cq_not-a-real-key"},
        {"Authorization": "Basic abc"},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer " + "x" * 5000},
    ],
)
def test_every_files_route_needs_a_valid_key(stack, owner, headers) -> None:
    with in_process_client(owner.key) as c:
        file_id = upload(c, "a.txt", b"hello\n")["id"]
    with in_process_client() as anon:
        calls = [
            ("POST", "/v1/files"),
            ("GET", "/v1/files"),
            *[(m, p.format(id=file_id)) for m, p in ROUTES],
        ]
        for method, path in calls:
            kw = {"files": {"file": ("a.txt", b"x")}} if method == "POST" else {}
            resp = anon.request(method, path, headers=headers, **kw)
            assert resp.status_code == 401, (method, path, resp.text)
            assert "detail" in resp.json()
    assert get_row(File, file_id) is not None  # the DELETE without a key did nothing


def test_owner_b_gets_404_for_owner_a_files_on_every_route(stack, make_owner) -> None:
    alice, bob = make_owner("alice"), make_owner("bob")
    with in_process_client(alice.key) as a, in_process_client(bob.key) as b:
        file_id = upload(a, "secret.txt", b"alice's secret\n")["id"]
        for method, path in ROUTES:
            resp = b.request(method, path.format(id=file_id))
            assert resp.status_code == 404, (method, path)
            assert resp.json() == {"detail": "file not found"}
            # exactly what a missing id answers
            missing = b.request(method, path.format(id="0" * 32))
            assert (missing.status_code, missing.json()) == (404, resp.json())
        assert b.get("/v1/files").json() == {"data": [], "next_cursor": None}
        assert a.get(f"/v1/files/{file_id}").status_code == 200  # still there for alice


# --- upload ------------------------------------------------------------------------------
def test_upload_answers_202_with_the_file_object_and_enqueues_after_commit(
    stack, app_client, owner
) -> None:
    c1, p1 = upload_targets(app_client, owner.owner_id)
    body = upload(app_client, "report.md", b"# Title\n\nbody\n", conversation_id=c1, project_id=p1)
    assert list(body) == [
        "id",
        "filename",
        "size_bytes",
        "sha256",
        "media_type",
        "file_type",
        "category",
        "status",
        "token_count",
        "processed_token_count",
        "truncation",
        "metadata",
        "cache_hit",
        "error",
        "conversation_id",
        "project_id",
        "created_at",
        "updated_at",
    ]
    assert body["status"] == "uploaded" and body["size_bytes"] == 14
    assert body["filename"] == "report.md" and body["media_type"] == "text/markdown"
    import hashlib

    assert body["sha256"] == hashlib.sha256(b"# Title\n\nbody\n").hexdigest()
    row = get_row(File, body["id"])
    assert row is not None and row.owner_id == owner.owner_id and row.status == "uploaded"
    sha = body["sha256"]
    blob = Path(stack.data_dir) / "blobs" / sha[:2] / sha[2:4] / sha
    assert blob.read_bytes() == b"# Title\n\nbody\n"
    # the real broker holds one process_file message for this id, with an expiry
    r = redis.Redis.from_url(stack.redis_url)
    messages = [json.loads(m) for m in r.lrange("files", 0, -1)]
    assert len(messages) == 1
    headers = messages[0]["headers"]
    assert headers["task"] == "contextq.process_file"
    assert headers["argsrepr"] == repr((body["id"],)) or body["id"] in headers["argsrepr"]
    assert headers["expires"] is not None


@pytest.mark.parametrize("chunked", [False, True])
def test_over_max_upload_bytes_is_413_and_leaves_no_temp_file(
    stack, make_stack, owner, chunked
) -> None:
    make_stack(MAX_UPLOAD_BYTES="1000")
    ctype, body = multipart_body(b"big.txt", b"x" * 5000)
    with in_process_client(owner.key) as c:
        if chunked:  # no Content-Length: the byte count while streaming catches it

            def gen():
                for i in range(0, len(body), 512):
                    yield body[i : i + 512]

            resp = c.post("/v1/files", content=gen(), headers={"Content-Type": ctype})
        else:
            resp = c.post("/v1/files", content=body, headers={"Content-Type": ctype})
        assert resp.status_code == 413, resp.text
        assert "MAX_UPLOAD_BYTES" in resp.json()["detail"]
        ok = upload(c, "small.txt", b"x" * 1000)  # exactly the limit is fine
        assert ok["size_bytes"] == 1000
    tmp = Path(stack.data_dir) / "blobs" / "tmp"
    assert not any(tmp.iterdir())
    assert len(all_rows(File)) == 1


def test_content_length_over_the_limit_is_refused_before_the_body_is_read(
    stack, make_stack, owner
) -> None:
    make_stack(MAX_UPLOAD_BYTES="1000")
    read = []

    def body():
        read.append(1)
        yield b"x" * 10

    with in_process_client(owner.key) as c:
        resp = c.post(
            "/v1/files",
            content=body(),
            headers={
                "Content-Type": "multipart/form-data; boundary=abc",
                "Content-Length": str(10 * 1024 * 1024),
            },
        )
    assert resp.status_code == 413
    assert read == []  # the body generator was never pulled


@pytest.mark.parametrize(
    ("make", "status", "needle"),
    [
        (lambda: multipart_body(b"empty.txt", b""), 422, "empty"),
        (lambda: ("multipart/form-data; boundary=zz", b"--zz--\r\n"), 422, "no file"),
        (lambda: ("application/json", b'{"file": "x"}'), 422, "multipart/form-data"),
        (lambda: ("multipart/form-data", b"--zz--\r\n"), 422, "multipart/form-data"),
        (
            lambda: ("multipart/form-data; boundary=zz", b"garbage without boundary"),
            400,
            "malformed",
        ),
        (
            lambda: (
                "multipart/form-data; boundary=zz",
                b'--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
            ),
            400,
            "ends before",
        ),
        (lambda: multipart_body(b"a.txt", b"x", fields={"conversation_id": "c" * 65}), 422, "64"),
        (lambda: multipart_body(b"a.txt", b"x", fields={"project_id": "p\x00"}), 422, "printable"),
        (lambda: multipart_body(b"a.txt", b"x", fields={"note": "n" * 5000}), 422, "too long"),
        (lambda: multipart_body(b"x" * 10_000 + b".txt", b"x"), 400, "header"),
        (lambda: ("multipart/form-data; boundary=" + "b" * 300, b"x"), 400, "malformed"),
    ],
)
def test_bad_uploads_are_4xx_with_a_detail(stack, app_client, make, status, needle) -> None:
    ctype, body = make()
    resp = app_client.post("/v1/files", content=body, headers={"Content-Type": ctype})
    assert resp.status_code == status, resp.text
    assert needle in json.dumps(resp.json()["detail"])
    assert all_rows(File) == []
    assert not any((Path(stack.data_dir) / "blobs" / "tmp").glob("*"))


def test_two_file_parts_are_refused(stack, app_client) -> None:
    b = b"--zz\r\n"
    part = b'Content-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc\r\n'
    body = b + part + b + part + b"--zz--\r\n"
    resp = app_client.post(
        "/v1/files", content=body, headers={"Content-Type": "multipart/form-data; boundary=zz"}
    )
    assert resp.status_code == 422 and "one file" in resp.json()["detail"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        ("C:\\Users\\me\\doc.txt", "doc.txt"),
        ("a\x00b\r\nc.txt", "abc.txt"),
        ("evil\u202egpj.exe", "evilgpj.exe"),
        ("\u2066iso\u2069late.txt", "isolate.txt"),
        ("zero\u200bwidth.txt", "zerowidth.txt"),
        ("", "upload"),
        ("...", "upload"),
        ("CON", "CON"),
        ("  spaced.txt  ", "spaced.txt"),
        ("e\u0301.txt", "\u00e9.txt"),
    ],
)
def test_sanitize_filename(raw, expected) -> None:
    assert sanitize_filename(raw) == expected


def test_sanitize_filename_caps_length_keeping_the_extension() -> None:
    name = sanitize_filename("a" * 1000 + ".tar.gz")
    assert len(name) == 255 and name.endswith(".gz")


def test_upload_with_hostile_filename_stores_display_text_only(stack, app_client) -> None:
    body = upload_raw(app_client, b"../../x\x00\x1b[2J\xe2\x80\xae.txt", b"data\n")
    assert body["filename"] == "x[2J.txt"
    names = [p.name for p in (Path(stack.data_dir) / "blobs").rglob("*") if p.is_file()]
    assert names == [body["sha256"]]


# --- reading -----------------------------------------------------------------------------
def test_content_is_409_until_ready(stack, app_client) -> None:
    file_id = upload(app_client, "a.txt", b"hello\n")["id"]
    resp = app_client.get(f"/v1/files/{file_id}/content")
    assert resp.status_code == 409 and "not ready" in resp.json()["detail"]


def test_list_filters_and_cursor_pagination(stack, app_client, owner) -> None:
    c1, p1 = upload_targets(app_client, owner.owner_id)
    ids = [
        upload(
            app_client,
            f"f{i}.txt",
            f"file {i}\n".encode(),
            conversation_id=c1 if i % 2 else None,
            project_id=p1 if i < 2 else None,
        )["id"]
        for i in range(5)
    ]
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = app_client.get("/v1/files", params=params).json()
        seen += [f["id"] for f in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and seen == list(reversed(ids))  # newest first, no duplicates
    conv = app_client.get("/v1/files", params={"conversation_id": c1}).json()["data"]
    assert {f["id"] for f in conv} == {ids[1], ids[3]}
    proj = app_client.get("/v1/files", params={"project_id": p1}).json()["data"]
    assert {f["id"] for f in proj} == {ids[0], ids[1]}
    assert len(app_client.get("/v1/files", params={"status": "uploaded"}).json()["data"]) == 5
    assert app_client.get("/v1/files", params={"status": "ready"}).json()["data"] == []
    for bad in (
        {"status": "bogus"},
        {"limit": 0},
        {"limit": 1000},
        {"cursor": "!!"},
        {"cursor": "bm9wZQ"},
    ):
        resp = app_client.get("/v1/files", params=bad)
        assert resp.status_code == 422, (bad, resp.text)


def test_delete_is_204_then_404(stack, app_client) -> None:
    file_id = upload(app_client, "a.txt", b"bye\n")["id"]
    assert app_client.delete(f"/v1/files/{file_id}").status_code == 204
    assert app_client.get(f"/v1/files/{file_id}").status_code == 404
    assert app_client.delete(f"/v1/files/{file_id}").status_code == 404
    assert get_row(File, file_id) is None


@pytest.mark.parametrize("file_id", ["x" * 5000, "../../etc", "%00", "' OR 1=1 --"])
def test_odd_ids_are_404_not_5xx(stack, app_client, file_id) -> None:
    for method, path in ROUTES:
        resp = app_client.request(method, path.format(id=file_id))
        assert resp.status_code == 404, (method, file_id, resp.text)


# --- health --------------------------------------------------------------------------------
def test_healthz_ok_without_auth(make_stack) -> None:
    # the grace counts from the API module's import, in this process at collection: a
    # grace longer than any suite keeps "started within it" true however late this runs
    make_stack(HEALTH_WORKER_GRACE_S=86_400)
    with in_process_client() as c:
        resp = c.get("/healthz")
    # no worker yet, but this API process started within HEALTH_WORKER_GRACE_S
    assert (resp.status_code, resp.json()) == (
        200,
        {"database": "ok", "broker": "ok", "workers": "none", "live_workers": 0},
    )


def test_healthz_503_when_the_broker_is_down(stack, make_stack) -> None:
    make_stack(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    with in_process_client() as c:
        resp = c.get("/healthz")
    assert resp.status_code == 503
    assert resp.json() == {
        "database": "ok",
        "broker": "unavailable",
        "workers": "unknown",
        "live_workers": None,
    }


def test_upload_still_202_when_the_broker_is_down(stack, make_stack, owner) -> None:
    make_stack(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    with in_process_client(owner.key) as c:
        body = upload(c, "a.txt", b"kept for the sweep\n")
    row = get_row(File, body["id"])
    assert row is not None and row.status == "uploaded" and row.attempts == 0
