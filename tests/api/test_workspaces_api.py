"""The workspace routes in-process (FastAPI TestClient over a real SQLite file and a
real Valkey; no worker, so Files stay `uploaded` here): PUT / list / raw GET / DELETE,
the traversal corpus, owner isolation, sizes and the storage quota (docs/workspaces.md,
docs/operations.md#running-the-service)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from contextq.settings import get_settings
from store.blobs import get_blob_store
from store.tables import File
from store.workspace_tables import WorkspaceEntry
from tests.engine.workspace.hostile_paths import HOSTILE_PATHS
from tests.support.api import in_process_client
from tests.support.db import all_rows, get_row
from tests.support.workspaces import new_conversation, put_file, ws_url

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack",
    [
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("s3", marks=pytest.mark.s3),  # the entry's blob in a bucket
    ],
    indirect=True,
)


def workspace_dir(owner_id: str, conversation_id: str) -> Path:
    return get_settings().workspaces_dir / owner_id / conversation_id


def snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under `root` (but `skip` and the database files) with
    its size and mtime."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path == skip or skip in path.parents or name.startswith("contextq.db"):
                continue
            st = path.lstat()
            out[str(path)] = (st.st_size, st.st_mtime_ns)
    return out


@BOTH_BACKENDS
def test_put_list_get_delete(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    data = b"id,name\n1,a\n2,b\n"
    entry = put_file(app_client, conv, "/workspace/data/table.csv", data)
    assert entry["path"] == "data/table.csv"
    assert entry["size_bytes"] == len(data)
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert entry["status"] == "uploaded"
    file_row = get_row(File, entry["file_id"])
    assert file_row is not None and file_row.conversation_id == conv
    assert file_row.filename == "table.csv" and file_row.owner_id == owner.owner_id
    on_disk = workspace_dir(owner.owner_id, conv) / "data" / "table.csv"
    assert on_disk.read_bytes() == data
    assert get_blob_store().read_bytes(entry["sha256"]) == data  # what the worker processes

    raw = app_client.get(ws_url(conv, "data/table.csv"))
    assert raw.status_code == 200 and raw.content == data
    assert raw.headers["content-type"].startswith("text/csv")
    assert raw.headers["content-length"] == str(len(data))
    assert app_client.get(ws_url(conv, "/workspace/data/table.csv")).content == data

    listing = app_client.get(ws_url(conv)).json()
    assert [e["path"] for e in listing["data"]] == ["data/table.csv"]
    assert listing["next_cursor"] is None
    assert set(listing["data"][0]) == {
        "path", "size_bytes", "sha256", "file_id", "status", "updated_at"
    }  # fmt: skip

    resp = app_client.delete(ws_url(conv, "data/table.csv"))
    assert resp.status_code == 204
    assert not on_disk.exists() and not on_disk.parent.exists()
    assert get_row(File, entry["file_id"]) is None
    assert app_client.get(ws_url(conv, "data/table.csv")).status_code == 404
    assert app_client.get(ws_url(conv)).json()["data"] == []


@BOTH_BACKENDS
def test_replacing_a_file_replaces_its_file_row(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    first = put_file(app_client, conv, "notes.txt", b"first version\n")
    second = put_file(app_client, conv, "notes.txt", b"second, longer version\n")
    assert second["file_id"] != first["file_id"]
    assert get_row(File, first["file_id"]) is None
    assert get_row(File, second["file_id"]) is not None
    assert app_client.get(ws_url(conv, "notes.txt")).content == b"second, longer version\n"
    assert len(all_rows(WorkspaceEntry, conversation_id=conv)) == 1


def test_an_empty_file_is_a_file(app_client: Any) -> None:
    conv = new_conversation(app_client)
    entry = put_file(app_client, conv, "empty.txt", b"")
    assert entry["size_bytes"] == 0
    assert app_client.get(ws_url(conv, "empty.txt")).content == b""


@BOTH_BACKENDS
def test_list_by_prefix_and_pages(app_client: Any) -> None:
    conv = new_conversation(app_client)
    paths = ["a/1.txt", "a/2.txt", "a/sub/3.txt", "ab.txt", "b/4.txt", "A/5.txt"]
    for p in paths:
        put_file(app_client, conv, p, p.encode())
    listed = app_client.get(ws_url(conv), params={"prefix": "a/"}).json()["data"]
    assert [e["path"] for e in listed] == ["a/1.txt", "a/2.txt", "a/sub/3.txt"]
    listed = app_client.get(ws_url(conv), params={"prefix": "/workspace/a"}).json()["data"]
    assert [e["path"] for e in listed] == ["a/1.txt", "a/2.txt", "a/sub/3.txt", "ab.txt"]
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = app_client.get(ws_url(conv), params=params).json()
        seen += [e["path"] for e in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(paths)
    bad = app_client.get(ws_url(conv), params={"prefix": "../"})
    assert bad.status_code == 422
    assert app_client.get(ws_url(conv), params={"cursor": "!!!"}).status_code == 422


def test_directories_and_files_do_not_replace_each_other(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    put_file(app_client, conv, "dir/inner.txt", b"inner")
    put_file(app_client, conv, "plain.txt", b"plain")
    r = app_client.put(ws_url(conv, "dir"), content=b"x")
    assert r.status_code == 422 and "directory" in str(r.json()["detail"])
    r = app_client.put(ws_url(conv, "plain.txt/child.txt"), content=b"x")
    assert r.status_code == 422 and "is a file" in str(r.json()["detail"])
    for method in ("GET", "DELETE"):
        r = app_client.request(method, ws_url(conv, "dir"))
        assert r.status_code == 422, (method, r.text)
        assert "directory" in str(r.json()["detail"])
    r = app_client.get(ws_url(conv, "dir"), params={"view": "processed"})
    assert r.status_code == 422
    assert app_client.get(ws_url(conv, "dir/inner.txt")).content == b"inner"
    assert app_client.get(ws_url(conv, "plain.txt")).content == b"plain"


def test_the_traversal_corpus_is_refused_and_nothing_is_written(
    app_client: Any, owner: Any, tmp_path: Path
) -> None:
    conv = new_conversation(app_client)
    root = workspace_dir(owner.owner_id, conv)
    put_file(app_client, conv, "seed.txt", b"seed")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.txt", root / "secret-link.txt")
    corpus = [
        *HOSTILE_PATHS,
        "link/escape.txt",
        "link/secret.txt",
        "secret-link.txt",
        "link",
    ]
    before = snapshot(tmp_path, skip=tmp_path / "no-skip")
    entries_before = len(all_rows(WorkspaceEntry))
    files_before = len(all_rows(File))
    for path in corpus:
        # an absolute path gives `…/workspace//etc/passwd`, the empty one `…/workspace/`
        url = ws_url(conv, path) if path else ws_url(conv) + "/"
        for method, kw in (
            ("PUT", {"content": b"ESCAPED"}),
            ("GET", {}),
            ("GET", {"params": {"view": "processed"}}),
            ("GET", {"params": {"view": "processed", "offset": 0}}),
            ("DELETE", {}),
        ):
            resp = app_client.request(method, url, **kw)
            assert resp.status_code == 422, (path, method, resp.status_code, resp.text)
            assert resp.json()["detail"], (path, method)
    assert snapshot(tmp_path, skip=tmp_path / "no-skip") == before
    assert len(all_rows(WorkspaceEntry)) == entries_before
    assert len(all_rows(File)) == files_before
    assert (outside / "secret.txt").read_text() == "secret"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not any(b"ESCAPED" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_a_percent_encoded_traversal_reaches_the_server_decoded_and_is_refused(
    app_client: Any,
) -> None:
    conv = new_conversation(app_client)
    base = f"/v1/conversations/{conv}/workspace/"
    for raw in ("..%2fescape.txt", "%2e%2e%2fescape.txt", "a%2f..%2f..%2fescape.txt"):
        resp = app_client.put(base + raw, content=b"x")
        assert resp.status_code == 422, (raw, resp.text)


def test_private_data_is_out_of_reach(app_client: Any, owner: Any) -> None:
    from service.history.checkpoint import flush_checkpoints

    conv = new_conversation(app_client)
    flush_checkpoints()  # the conversation's own checkpoint is written after its commit
    private = get_settings().workspaces_dir / "_private-data" / owner.owner_id
    private.mkdir(parents=True, exist_ok=True)
    (private / f"{conv}.json").write_text('{"memory": "private"}')
    for path in (
        f"../../_private-data/{owner.owner_id}/{conv}.json",
        f"/workspace/../../_private-data/{owner.owner_id}/{conv}.json",
        f"{get_settings().workspaces_dir}/_private-data/{owner.owner_id}/{conv}.json",
    ):
        for method in ("GET", "PUT", "DELETE"):
            resp = app_client.request(method, ws_url(conv, path), content=b"x")
            assert resp.status_code == 422, (path, method, resp.text)
    flush_checkpoints()
    assert (private / f"{conv}.json").read_text() == '{"memory": "private"}'


def test_owner_isolation_on_every_workspace_route(stack: Any, make_owner: Any) -> None:
    alice, bob = make_owner("alice"), make_owner("bob")
    with in_process_client(alice.key) as a, in_process_client(bob.key) as b:
        conv = new_conversation(a)
        put_file(a, conv, "secret.txt", b"alice's secret")
        calls = [
            ("PUT", ws_url(conv, "secret.txt"), {"content": b"bob was here"}),
            ("PUT", ws_url(conv, "new.txt"), {"content": b"bob was here"}),
            ("GET", ws_url(conv), {}),
            ("GET", ws_url(conv), {"params": {"prefix": "s"}}),
            ("GET", ws_url(conv, "secret.txt"), {}),
            ("GET", ws_url(conv, "secret.txt"), {"params": {"view": "processed"}}),
            ("GET", ws_url(conv, "secret.txt"), {"params": {"view": "processed", "offset": 0}}),
            ("DELETE", ws_url(conv, "secret.txt"), {}),
        ]
        for method, url, kw in calls:
            resp = b.request(method, url, **kw)
            assert resp.status_code == 404, (method, url, resp.text)
            assert resp.json()["detail"] == "conversation not found"
        assert a.get(ws_url(conv, "secret.txt")).content == b"alice's secret"
        assert [e["path"] for e in a.get(ws_url(conv)).json()["data"]] == ["secret.txt"]
        assert not (get_settings().workspaces_dir / bob.owner_id).exists()


def test_unknown_conversation_is_404_before_the_body_is_read(app_client: Any) -> None:
    resp = app_client.put(ws_url("0" * 32, "a.txt"), content=b"x")
    assert resp.status_code == 404
    assert not get_settings().workspaces_dir.exists() or not any(
        get_settings().workspaces_dir.rglob("a.txt")
    )


@pytest.mark.stack_env(MAX_UPLOAD_BYTES="1000")
def test_over_the_upload_limit_is_413_and_nothing_stays(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    resp = app_client.put(ws_url(conv, "big.bin"), content=b"x" * 1001)
    assert resp.status_code == 413 and "MAX_UPLOAD_BYTES" in resp.json()["detail"]

    def chunks() -> Any:  # no Content-Length: counted while streaming
        for _ in range(20):
            yield b"y" * 100

    resp = app_client.put(ws_url(conv, "dir/streamed.bin"), content=chunks())
    assert resp.status_code == 413
    root = workspace_dir(owner.owner_id, conv)
    assert not root.exists() or list(root.rglob("*")) == []
    assert all_rows(WorkspaceEntry) == []
    assert put_file(app_client, conv, "ok.bin", b"z" * 1000)["size_bytes"] == 1000


@BOTH_BACKENDS
@pytest.mark.stack_env(MAX_STORAGE_BYTES_PER_OWNER="1000")
def test_storage_quota_counts_uploads_and_workspace_files(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    up = app_client.post("/v1/files", files={"file": ("u.txt", b"u" * 400)})
    assert up.status_code == 202
    put_file(app_client, conv, "a.bin", b"a" * 500)
    resp = app_client.put(ws_url(conv, "b.bin"), content=b"b" * 101)
    assert resp.status_code == 429
    assert "MAX_STORAGE_BYTES_PER_OWNER" in resp.json()["detail"]
    assert not (workspace_dir(owner.owner_id, conv) / "b.bin").exists()

    def chunks() -> Any:  # no Content-Length: refused exactly at the commit
        yield b"c" * 101

    resp = app_client.put(ws_url(conv, "c.bin"), content=chunks())
    assert resp.status_code == 429
    assert sorted(p.name for p in workspace_dir(owner.owner_id, conv).iterdir()) == ["a.bin"]
    # replacing a file counts only the difference
    assert put_file(app_client, conv, "a.bin", b"A" * 600)["size_bytes"] == 600
    assert app_client.get(ws_url(conv, "a.bin")).content == b"A" * 600


@BOTH_BACKENDS
def test_deleting_the_file_row_keeps_the_workspace_file(app_client: Any) -> None:
    conv = new_conversation(app_client)
    entry = put_file(app_client, conv, "keep.txt", b"keep me\n")
    assert app_client.delete(f"/v1/files/{entry['file_id']}").status_code == 204
    listed = app_client.get(ws_url(conv)).json()["data"]
    assert listed[0]["file_id"] is None and listed[0]["status"] is None
    assert app_client.get(ws_url(conv, "keep.txt")).content == b"keep me\n"
    resp = app_client.get(ws_url(conv, "keep.txt"), params={"view": "processed"})
    assert resp.status_code == 409 and "PUT the file again" in resp.json()["detail"]
    portion = app_client.get(ws_url(conv, "keep.txt"), params={"view": "processed", "offset": 0})
    assert portion.status_code == 200 and portion.json()["text"] == "keep me"


def test_processed_view_waits_for_the_worker(app_client: Any) -> None:
    conv = new_conversation(app_client)
    put_file(app_client, conv, "t.txt", b"one\ntwo\n")
    resp = app_client.get(ws_url(conv, "t.txt"), params={"view": "processed"})
    assert resp.status_code == 409 and "not processed yet" in resp.json()["detail"]
    resp = app_client.get(ws_url(conv, "t.txt"), params={"offset": 1})
    assert resp.status_code == 422 and "view=processed" in resp.json()["detail"]


def test_a_missing_file_on_disk_is_410(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    put_file(app_client, conv, "gone.txt", b"x")
    (workspace_dir(owner.owner_id, conv) / "gone.txt").unlink()
    assert app_client.get(ws_url(conv, "gone.txt")).status_code == 410
    assert app_client.delete(ws_url(conv, "gone.txt")).status_code == 204


@BOTH_BACKENDS
def test_deleting_the_conversation_removes_its_workspace(app_client: Any, owner: Any) -> None:
    conv = new_conversation(app_client)
    other = new_conversation(app_client)
    entry = put_file(app_client, conv, "a/b.txt", b"bytes")
    put_file(app_client, other, "kept.txt", b"kept")
    root = workspace_dir(owner.owner_id, conv)
    assert root.is_dir()
    assert app_client.delete(f"/v1/conversations/{conv}").status_code == 204
    assert not root.exists()
    assert get_row(File, entry["file_id"]) is None
    assert all_rows(WorkspaceEntry, conversation_id=conv) == []
    assert app_client.get(ws_url(other, "kept.txt")).content == b"kept"
    trash = get_settings().workspaces_dir / "_trash"
    assert not trash.exists() or list(trash.iterdir()) == []
