"""BLOB_STORE=s3 against a real S3 endpoint (moto's server mode) and a real Valkey: what
lands under which key and when, streaming reads, the local cache, the sweep's pins, and
the start-up check."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from contextq.settings import get_settings
from service.blob_sweep import sweep_blobs
from store.blobs import BlobMissing, BlobStoreUnavailable, BlobTooLarge, get_blob_store
from store.blobstore.cache import DamagedDownload
from tests.support.procs import free_port

pytestmark = [pytest.mark.s3, pytest.mark.parametrize("stack", ["s3"], indirect=True)]

MiB = 1024 * 1024
HOUR = 3600.0


def _keys(stack: Any, s3_server: Any, where: str) -> list[str]:
    bucket = stack.env["S3_BUCKET"]
    return s3_server.keys(bucket, f"{stack.env['S3_PREFIX']}{where}")


def _uploads(stack: Any, s3_server: Any) -> list[Any]:
    answer = s3_server.client().list_multipart_uploads(Bucket=stack.env["S3_BUCKET"])
    return list(answer.get("Uploads", []))


def _expire_pin(store: Any, sha: str) -> None:
    """As if BLOB_SWEEP_GRACE_S had passed since the blob's writer pinned it."""
    store.pins._redis().delete(store.pins.key(store.key(sha)))


def _stream(store: Any, data: bytes, *, chunk: int = 64 * 1024, before_commit: Any = None) -> Any:
    w = store.writer()
    for i in range(0, len(data), chunk):
        w.write(data[i : i + chunk])
        if w.wants_flush:
            w.flush()
    if before_commit:
        before_commit(w)
    return w.commit()


@pytest.mark.stack_env(S3_PART_SIZE_BYTES=str(5 * MiB))
def test_a_large_upload_goes_multipart_to_a_temporary_key_then_to_its_hash(
    stack: Any, s3_server: Any
) -> None:
    store = get_blob_store()
    data = os.urandom(12 * MiB + 123)
    seen: dict[str, Any] = {}

    def look(_w: Any) -> None:  # body in, not committed: nothing under blobs/ yet
        seen["blobs"] = _keys(stack, s3_server, "blobs/")
        seen["uploads"] = [u["Key"] for u in _uploads(stack, s3_server)]

    sha, size = _stream(store, data, before_commit=look)
    assert (sha, size) == (hashlib.sha256(data).hexdigest(), len(data))
    assert seen["blobs"] == []
    assert len(seen["uploads"]) == 1 and "/tmp/" in f"/{seen['uploads'][0]}"
    assert _keys(stack, s3_server, "blobs/") == [f"cq/blobs/{sha}"]
    assert _keys(stack, s3_server, "tmp/") == [] and _uploads(stack, s3_server) == []
    with store.open(sha) as reader:
        assert reader.size == len(data)
        assert hashlib.sha256(b"".join(reader)).hexdigest() == sha


def test_small_blobs_are_put_once_hashed_and_stored_bytes_are_reused(
    stack: Any, s3_server: Any
) -> None:
    store = get_blob_store()
    sha = store.put_bytes(b"hello s3\n")
    assert store.read_bytes(sha) == b"hello s3\n" and store.size(sha) == 9
    client, bucket = s3_server.client(), stack.env["S3_BUCKET"]
    first = client.head_object(Bucket=bucket, Key=f"cq/blobs/{sha}")["LastModified"]
    time.sleep(1.1)  # Last-Modified has a resolution of one second
    assert store.put_bytes(b"hello s3\n") == sha  # the same bytes: found, not written again
    assert client.head_object(Bucket=bucket, Key=f"cq/blobs/{sha}")["LastModified"] == first
    assert not store.exists("0" * 64) and store.size("0" * 64) is None
    with pytest.raises(BlobMissing):
        store.open("0" * 64)


@pytest.mark.stack_env(S3_PART_SIZE_BYTES=str(5 * MiB))
def test_an_aborted_or_too_large_upload_leaves_nothing(stack: Any, s3_server: Any) -> None:
    store = get_blob_store()
    w = store.writer()
    w.write(os.urandom(6 * MiB))
    w.flush()
    assert len(_uploads(stack, s3_server)) == 1
    w.abort()
    assert _uploads(stack, s3_server) == []
    small = store.writer(limit=6 * MiB)
    with pytest.raises(BlobTooLarge):
        for _ in range(7):
            small.write(os.urandom(MiB))
            if small.wants_flush:
                small.flush()
    assert _uploads(stack, s3_server) == [] and _keys(stack, s3_server, "") == []


@pytest.mark.stack_env(BLOB_CACHE_MAX_BYTES=str(3 * MiB))
def test_workers_read_through_a_bounded_local_cache(stack: Any, s3_server: Any) -> None:
    store = get_blob_store()
    cache = Path(stack.data_dir) / "cache" / "blobs"
    blobs = [store.put_bytes(os.urandom(MiB)) for _ in range(4)]
    with store.local_copy(blobs[0]) as held:
        assert held.parent == cache
        for sha in blobs[1:]:
            with store.local_copy(sha) as path:
                assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
        assert held.exists()  # in use: never evicted, though the oldest
    cached = [p for p in cache.iterdir() if p.is_file()]
    assert sum(p.stat().st_size for p in cached) <= 3 * MiB
    big = store.put_bytes(os.urandom(4 * MiB))  # over the cache: a private copy
    with store.local_copy(big) as path:
        assert path.parent == cache / "tmp" and path.stat().st_size == 4 * MiB
    assert not path.exists()
    assert not (Path(stack.data_dir) / "blobs").exists()


def test_a_local_copy_whose_bytes_do_not_match_is_refused(stack: Any, s3_server: Any) -> None:
    store = get_blob_store()
    sha = hashlib.sha256(b"the real bytes").hexdigest()
    s3_server.client().put_object(
        Bucket=stack.env["S3_BUCKET"], Key=f"cq/blobs/{sha}", Body=b"other bytes"
    )
    with pytest.raises(DamagedDownload), store.local_copy(sha):
        pass
    assert not any((Path(stack.data_dir) / "cache" / "blobs").glob("*" + sha[-8:]))


def test_the_sweep_on_s3_deletes_old_orphans_and_abandoned_uploads_only(
    stack: Any, s3_server: Any, app_client: Any
) -> None:
    from tests.support.files import upload

    store = get_blob_store()
    kept = upload(app_client, "kept.txt", b"a row points at me\n")
    orphan = store.put_bytes(b"nobody points at me\n")
    _expire_pin(store, orphan)
    _expire_pin(store, kept["sha256"])
    pinned = hashlib.sha256(b"an upload is about to reference me\n").hexdigest()
    s3_server.client().put_object(
        Bucket=stack.env["S3_BUCKET"],
        Key=f"cq/blobs/{pinned}",
        Body=b"an upload is about to reference me\n",
    )
    store.pins.pin(store.key(pinned))  # a writer between its pin and its commit
    client, bucket = s3_server.client(), stack.env["S3_BUCKET"]
    dead = client.create_multipart_upload(Bucket=bucket, Key="cq/tmp/dead")["UploadId"]
    later = time.time() + 2 * HOUR  # everything is "old" to this sweep

    report = sweep_blobs(settings=get_settings(), now=later)

    assert report.deleted == 1 and report.examined == 3
    assert not store.exists(orphan)
    assert store.exists(kept["sha256"]) and store.exists(pinned)
    assert report.temps_deleted == 1
    assert dead not in [u["UploadId"] for u in _uploads(stack, s3_server)]
    assert app_client.get(f"/v1/files/{kept['id']}").status_code == 200


def test_a_writer_arriving_while_the_sweep_deletes_stores_its_own_copy(
    stack: Any, s3_server: Any
) -> None:
    """The deleter holds the blob; the writer's pin waits for it, finds the object gone and
    PUTs its own copy; once pinned, the same deleter keeps it."""
    store = get_blob_store()
    data = b"contended bytes\n"
    sha = store.put_bytes(data)
    assert not store.delete_if_unused(sha, older_than=time.time() + HOUR)  # pinned: kept
    _expire_pin(store, sha)
    deleting, go_on = threading.Event(), threading.Event()

    def unreferenced() -> bool:
        deleting.set()
        assert go_on.wait(10)
        return True

    deleted: list[bool] = []
    sweeper = threading.Thread(
        target=lambda: deleted.append(
            store.delete_if_unused(sha, older_than=time.time() + HOUR, unreferenced=unreferenced)
        )
    )
    sweeper.start()
    assert deleting.wait(10)
    committed: list[str] = []
    writer = threading.Thread(target=lambda: committed.append(store.put_bytes(data)))
    writer.start()
    time.sleep(0.3)
    assert not committed  # waiting for the deleter's hold
    go_on.set()
    sweeper.join(10)
    writer.join(10)
    assert deleted == [True] and committed == [sha]
    assert store.read_bytes(sha) == data  # the writer's own copy
    assert not store.delete_if_unused(sha, older_than=time.time() + HOUR)  # pinned: kept
    assert store.exists(sha)


def test_bad_configuration_fails_the_start_check_saying_what_to_fix(
    stack: Any, s3_server: Any, make_stack: Any
) -> None:
    from store.blobs import check_blob_store

    check_blob_store()  # the stack's own configuration is fine
    cases = {
        "does not exist": {"S3_BUCKET": "no-such-bucket-here"},
        "credentials were refused": {"AWS_SECRET_ACCESS_KEY": "wrong"},
        "cannot be reached": {"S3_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"},
    }
    for words, env in cases.items():
        make_stack(**env)
        with pytest.raises(BlobStoreUnavailable, match=words):
            check_blob_store()
        make_stack(**{k: stack.env.get(k) for k in env})
