"""The storage sweep: unreferenced blobs go after the grace period, and never one an upload
in flight is about to reference (a slow upload through the real API; an upload frozen
between pinning its blob and committing its row; the lock interleaving itself)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextq.settings import get_settings
from service.blob_sweep import sweep_blobs
from store.blobs import get_blob_store
from store.blobstore.filesystem import FilesystemBlobStore as BlobStore
from tests.support.files import upload, wait_file_done
from tests.support.procs import wait_until

pytestmark = pytest.mark.integration

HOUR = 3600.0


def age(path: Path, seconds: float = 2 * HOUR) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def orphan(blobs: BlobStore, data: bytes, *, aged: bool = True) -> str:
    sha = blobs.put_bytes(data)
    if aged:
        age(blobs.path(sha))
    return sha


def test_sweep_deletes_old_unreferenced_blobs_and_abandoned_temps(
    stack: Any, app_client: Any
) -> None:
    blobs = get_blob_store()
    kept_file = upload(app_client, "kept.txt", b"a file row points at me\n")
    age(blobs.path(kept_file["sha256"]))
    old_orphan = orphan(blobs, b"nobody points at me\n")
    new_orphan = orphan(blobs, b"nobody points at me, but I am new\n", aged=False)
    blobs.tmp.mkdir(parents=True, exist_ok=True)
    dead_temp, live_temp = blobs.tmp / "blob-dead", blobs.tmp / "blob-live"
    dead_temp.write_bytes(b"half an upload")
    live_temp.write_bytes(b"an upload in flight")
    age(dead_temp)

    report = sweep_blobs(settings=get_settings())

    assert (report.deleted, report.temps_deleted, report.examined) == (1, 1, 2)
    assert not blobs.path(old_orphan).exists()
    assert blobs.path(kept_file["sha256"]).exists()
    assert blobs.path(new_orphan).exists()
    assert live_temp.exists() and not dead_temp.exists()
    assert app_client.get(f"/v1/files/{kept_file['id']}").status_code == 200


@pytest.mark.stack_env(BLOB_SWEEP_INTERVAL_S="1", BLOB_SWEEP_GRACE_S="10")
def test_the_beat_sweep_runs_in_the_worker(
    stack: Any, worker: Any, beat_factory: Any, client: Any
) -> None:
    blobs = get_blob_store()
    ready = wait_file_done(client, upload(client, "r.txt", b"ready and referenced\n")["id"])
    age(blobs.path(ready["sha256"]), 60)
    gone = orphan(blobs, b"an orphan the beat sweep takes\n")
    beat_factory()
    wait_until(lambda: not blobs.path(gone).exists(), timeout=30, what="the beat sweep")
    assert blobs.path(ready["sha256"]).exists()
    assert client.get(f"/v1/files/{ready['id']}/content").text.startswith("ready and")


def _slow_body(data: bytes, started: threading.Event, pause_s: float) -> Iterator[bytes]:
    head = b'--B0undary\r\nContent-Disposition: form-data; name="file"; filename="s.txt"\r\n\r\n'
    yield head + data[:10]
    started.set()
    time.sleep(pause_s)  # the sweep runs while the body is still arriving
    yield data[10:] + b"\r\n--B0undary--\r\n"


def test_a_slow_upload_of_bytes_the_sweep_deletes_meanwhile_still_ends_ready(
    stack: Any, worker: Any, api_server: Any, client: Any
) -> None:
    blobs = get_blob_store()
    data = b"the same bytes as an old orphan, uploaded slowly\n" * 20
    old = orphan(blobs, data)
    started, answer = threading.Event(), {}

    def slow_upload() -> None:
        answer["resp"] = client.post(
            "/v1/files",
            content=_slow_body(data, started, 2.0),
            headers={"Content-Type": "multipart/form-data; boundary=B0undary"},
        )

    thread = threading.Thread(target=slow_upload)
    thread.start()
    assert started.wait(10)
    time.sleep(0.3)
    temps = list(blobs.tmp.glob("blob-*"))
    report = sweep_blobs(settings=get_settings())  # mid-body
    assert report.deleted == 1 and not blobs.path(old).exists()  # the orphan went ...
    assert all(t.exists() for t in temps) and temps  # ... the upload's temp file did not
    thread.join(30)
    resp = answer["resp"]
    assert resp.status_code == 202, resp.text
    done = wait_file_done(client, resp.json()["id"])
    assert done["status"] == "ready", done
    assert blobs.path(old).read_bytes() == data  # stored again by the upload itself
    assert client.get(f"/v1/files/{done['id']}/content").text.startswith("the same bytes")


@pytest.mark.stack_env(DATABASE_LOCK_TIMEOUT_S="30")
def test_an_upload_between_pinning_its_blob_and_committing_is_never_swept(
    stack: Any, worker: Any, api_server: Any, client: Any
) -> None:
    blobs = get_blob_store()
    data = b"bytes an upload reuses while the sweep runs\n" * 10
    sha = orphan(blobs, data)
    # freeze the upload after its pin: it waits for the database's write lock we hold
    db = sqlite3.connect(get_settings().data_dir / "contextq.db", isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    answer = {}
    thread = threading.Thread(
        target=lambda: answer.setdefault("resp", upload(client, "p.txt", data, expect=None))
    )
    try:
        thread.start()
        wait_until(
            lambda: blobs.path(sha).stat().st_mtime > time.time() - 60,
            timeout=10,
            what="the upload to pin the stored blob",
        )
        report = sweep_blobs(settings=get_settings())  # the row is not committed yet
        assert report.deleted == 0 and blobs.path(sha).exists()
    finally:
        db.execute("ROLLBACK")
        db.close()
    thread.join(30)
    assert answer["resp"].status_code == 202, answer["resp"].text
    done = wait_file_done(client, answer["resp"].json()["id"])
    assert done["status"] == "ready" and done["sha256"] == sha


def test_pin_and_delete_interleave_safely(tmp_path: Path) -> None:
    """The deleter holds its lock while the writer arrives: the writer waits, sees the
    blob gone, and stores its own copy; a writer that pinned first keeps the blob."""
    blobs = BlobStore(tmp_path / "blobs", fsync=False)
    data = b"contended bytes\n"
    sha = blobs.put_bytes(data)
    age(blobs.path(sha))
    deleting, go_on = threading.Event(), threading.Event()

    def unreferenced() -> bool:
        deleting.set()
        assert go_on.wait(10)
        return True

    deleted: list[bool] = []
    sweeper = threading.Thread(
        target=lambda: deleted.append(
            blobs.delete_if_unused(sha, older_than=time.time() - 60, unreferenced=unreferenced)
        )
    )
    sweeper.start()
    assert deleting.wait(10)
    committed: list[tuple[str, int]] = []
    writer = blobs.writer()
    writer.write(data)
    w = threading.Thread(target=lambda: committed.append(writer.commit()))
    w.start()
    time.sleep(0.2)
    assert not committed  # blocked on the deleter's lock
    go_on.set()
    sweeper.join(10)
    w.join(10)
    assert deleted == [True] and committed == [(sha, len(data))]
    assert blobs.path(sha).read_bytes() == data  # the writer's own copy
    assert blobs.path(sha).stat().st_mtime > time.time() - 60
    # now pinned and fresh: a sweep with the same cutoff keeps it
    assert not blobs.delete_if_unused(sha, older_than=time.time() - 60)
    assert blobs.path(sha).exists()
