"""The use cases behind the file tasks (`service.files`), over a real SQLite file (no worker
process).

Claims, attempts, guarded result writes and the recovery sweep are checked
directly; tests/integration runs the same code inside real workers.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from datetime import timedelta

import pytest

from contextq.settings import get_settings
from service import files as fp
from store import files_queries as q
from store.blobs import get_blob_store
from store.db import read_session, session_scope
from store.tables import File, FileStatus, utcnow
from tests.support.db import get_row

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack",
    [
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("s3", marks=pytest.mark.s3),  # SQLite, BLOB_STORE=s3 (moto server)
    ],
    indirect=True,
)


def _row(owner, data: bytes = b"hello world\n", *, filename: str = "a.txt", **kw) -> File:
    sha = get_blob_store().put_bytes(data)
    row = File(owner_id=owner.owner_id, filename=filename, size_bytes=len(data), sha256=sha, **kw)
    with session_scope() as s:
        s.add(row)
    return row


def _process(file_id: str) -> fp.Outcome:
    return fp.process_file(settings=get_settings(), file_id=file_id)


@BOTH_BACKENDS
def test_process_then_redelivery_is_a_no_op(stack, owner) -> None:
    row = _row(owner, b"some text\n")
    first = _process(row.id)
    assert (first.status, first.attempt, first.written) == ("ready", 1, True)
    stored = get_row(File, row.id)
    # uncut: token_count is the content's own count, "some text" (README, API section)
    assert stored is not None and stored.status == "ready" and stored.token_count == 2
    assert stored.processed_token_count == 2
    assert stored.content_sha256 is None  # a text result lives in file_contents
    with read_session() as s:
        assert q.file_text(s, file_id=row.id).startswith("some text")
    again = _process(row.id)  # a duplicate/redelivered message
    assert again.status == "done"
    assert get_row(File, row.id).attempts == 1


def test_one_info_line_per_processed_file(stack, owner, caplog) -> None:
    row = _row(owner, b"logged text\n")
    failed = _row(owner, b"\x00\x01\x02\x03" * 100 + os.urandom(512), filename="blob.bin")
    with caplog.at_level(logging.INFO, logger="contextq.files"):
        _process(row.id)
        _process(failed.id)
        _process(row.id)  # a redelivery processes nothing and logs nothing
    lines = [r.getMessage() for r in caplog.records if r.name == "contextq.files"]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"file {row.id} processed: file_type=text status=ready ")
    assert lines[1].startswith(f"file {failed.id} processed: file_type=binary status=failed ")
    assert all(re.search(r"duration_ms=\d+\.\d", line) for line in lines)


def test_missing_row_and_missing_blob(stack, owner) -> None:
    assert _process("0" * 32).status == "missing"
    row = _row(owner, b"to be lost\n")
    get_blob_store().delete(row.sha256)
    out = _process(row.id)
    assert out.status == "failed"
    assert "missing or damaged in storage" in get_row(File, row.id).error


def test_unsupported_file_ends_failed_with_a_reason(stack, owner) -> None:
    row = _row(owner, b"\x00\x01\x02\x03" * 100 + os.urandom(512), filename="blob.bin")
    out = _process(row.id)
    assert out.status == "failed"
    stored = get_row(File, row.id)
    assert stored.status == "failed" and stored.error and "\x00" not in stored.error


def _claim(
    file_id: str,
    *,
    worker_id: str = "me",
    dead=lambda h: False,
    max_attempts: int = 3,
    lease_s: float = 60.0,
    released: tuple[fp.Release, ...] = (),
) -> fp.Claim:
    with session_scope() as s:
        return fp.claim_file(
            s,
            file_id=file_id,
            worker_id=worker_id,
            max_attempts=max_attempts,
            lease_expired_before=utcnow() - timedelta(seconds=lease_s),
            holder_is_dead=dead,
            released=released,
        )


@BOTH_BACKENDS
def test_claim_rules(stack, owner) -> None:
    row = _row(owner)
    c1 = _claim(row.id, worker_id="w1")
    assert (c1.outcome, c1.attempt) == ("claimed", 1)
    # held by a live process elsewhere: a duplicate delivery backs off
    assert _claim(row.id, worker_id="w2").outcome == "busy"
    # the holder is dead: taken over at once, attempts counted
    c2 = _claim(row.id, worker_id="w2", dead=lambda h: h == "w1")
    assert (c2.outcome, c2.attempt) == ("claimed", 2)
    # the lease expired: taken over
    c3 = _claim(row.id, worker_id="w3", lease_s=-1)
    assert (c3.outcome, c3.attempt) == ("claimed", 3)
    # out of attempts: failed with a reason, no 4th run
    c4 = _claim(row.id, worker_id="w4", dead=lambda h: True)
    assert c4.outcome == "exhausted"
    stored = get_row(File, row.id)
    assert stored.status == "failed" and stored.attempts == 3
    assert "crashed or timed out the worker 3 times" in stored.error


@BOTH_BACKENDS
def test_a_handed_on_claim_is_resumed_as_the_same_attempt(stack, owner) -> None:
    """A holder that gave up waiting for the database names itself in the next message;
    that claim resumes its row at once (not "busy" until the lease expires) and the
    outage costs no attempt. A release never frees a claim made after it, nor another
    holder's."""
    row = _row(owner)
    assert _claim(row.id, worker_id="w1", max_attempts=1).attempt == 1
    gave_up = fp.Release("w1", utcnow())
    assert _claim(row.id, worker_id="w2", released=(fp.Release("w9", utcnow()),)).outcome == "busy"
    assert (
        _claim(
            row.id, worker_id="w2", released=(fp.Release("w1", utcnow() - timedelta(seconds=60)),)
        ).outcome
        == "busy"
    )
    resumed = _claim(row.id, worker_id="w2", max_attempts=1, released=(gave_up,))
    assert (resumed.outcome, resumed.attempt) == ("claimed", 1)  # even at MAX_ATTEMPTS
    stored = get_row(File, row.id)
    assert (stored.status, stored.attempts, stored.lease_owner) == ("processing", 1, "w2")
    # w1's release is spent: w2 holds a claim made after it
    assert _claim(row.id, worker_id="w3", released=(gave_up,)).outcome == "busy"
    # a chain: w2 gave up too; a message naming both frees the row for w3
    chain = fp.releases_from([gave_up.as_message(), fp.Release("w2", utcnow()).as_message()])
    assert _claim(row.id, worker_id="w3", released=chain).outcome == "claimed"
    with session_scope() as s:
        assert q.write_result(s, file_id=row.id, attempt=1, values={"status": "ready"})
    assert _claim(row.id, worker_id="w4", released=chain).outcome == "done"


def test_releases_from_a_message() -> None:
    now = utcnow()
    good = fp.Release("host:1:2", now)
    assert fp.releases_from([good.as_message()]) == (good,)
    assert fp.releases_from(None) == ()
    # malformed or naive entries are dropped (they could only free a row sooner)
    assert fp.releases_from([["x"], ["h", "not a time"], ["h", "2026-01-01T00:00:00"], 5]) == ()
    many = [fp.Release(f"h{i}", now).as_message() for i in range(30)]
    assert [r.holder for r in fp.releases_from(many)] == [f"h{i}" for i in range(10, 30)]


@BOTH_BACKENDS
def test_stale_attempt_cannot_write(stack, owner) -> None:
    row = _row(owner)
    old = _claim(row.id, worker_id="w1")
    new = _claim(row.id, worker_id="w2", dead=lambda h: True)
    with session_scope() as s:
        assert not q.write_result(
            s, file_id=row.id, attempt=old.attempt, values={"status": "failed", "error": "stale"}
        )
    with session_scope() as s:
        assert q.write_result(
            s, file_id=row.id, attempt=new.attempt, values={"status": "ready", "error": "ok"}
        )
    stored = get_row(File, row.id)
    assert (stored.status, stored.error, stored.lease_owner) == ("ready", "ok", None)


@BOTH_BACKENDS
def test_concurrent_claims_only_one_wins(stack, owner) -> None:
    row = _row(owner)
    results: list[str] = []
    barrier = threading.Barrier(4)

    def go(i: int) -> None:
        barrier.wait()
        results.append(_claim(row.id, worker_id=f"w{i}").outcome)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["busy", "busy", "busy", "claimed"]
    assert get_row(File, row.id).attempts == 1


def test_holder_is_dead() -> None:
    assert not fp.holder_is_dead(fp.worker_identity())  # this very process
    host = fp.worker_identity().rsplit(":", 2)[0]
    assert fp.holder_is_dead(f"{host}:999999999:1")  # no such pid
    assert fp.holder_is_dead(f"{host}:{os.getpid()}:1")  # pid reused (start time differs)
    assert not fp.holder_is_dead("other-host:1:1")  # cannot tell: wait for the lease
    assert not fp.holder_is_dead("garbage")


@pytest.mark.stack_env(RECOVERY_UPLOADED_GRACE_S="0", MAX_ATTEMPTS="2")
@BOTH_BACKENDS
def test_recovery_sweep(stack, owner) -> None:
    settings = get_settings()
    fresh_upload = _row(owner, b"a\n")
    dead = _row(owner, b"b\n")
    live = _row(owner, b"c\n")
    spent = _row(owner, b"d\n")
    ready = _row(owner, b"e\n")
    _process(ready.id)
    _claim(dead.id, worker_id="gone")
    with session_scope() as s:
        s.get(File, dead.id).lease_owner = f"{fp.worker_identity().rsplit(':', 2)[0]}:999999999:1"
    _claim(live.id, worker_id=fp.worker_identity())  # held by this (live) process
    _claim(spent.id, worker_id="x")
    _claim(spent.id, worker_id="y", lease_s=-1)  # attempts 2 = MAX_ATTEMPTS
    with session_scope() as s:  # its lease expired long ago
        s.get(File, spent.id).started_at = utcnow() - timedelta(days=1)
    time.sleep(0.01)

    sent: list[str] = []
    report = fp.recover_files(settings=settings, send=sent.append)
    assert sorted(report.requeued) == sorted([fresh_upload.id, dead.id])
    assert report.failed == [spent.id]
    assert sorted(sent) == sorted(report.requeued)
    assert get_row(File, dead.id).status == FileStatus.UPLOADED
    assert get_row(File, live.id).status == FileStatus.PROCESSING
    assert "2 times" in get_row(File, spent.id).error
    assert get_row(File, ready.id).status == FileStatus.READY


@pytest.mark.stack_env(RECOVERY_UPLOADED_GRACE_S="0")
@BOTH_BACKENDS
def test_two_sweeps_at_once_enqueue_each_row_once(stack, owner) -> None:
    rows = [_row(owner, f"{i}\n".encode()) for i in range(10)]
    time.sleep(0.01)
    sent: list[str] = []
    lock = threading.Lock()

    def enqueue(file_id: str) -> None:
        with lock:
            sent.append(file_id)

    barrier = threading.Barrier(2)

    def sweep() -> None:
        barrier.wait()
        fp.recover_files(settings=get_settings(), send=enqueue)

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(sent) == sorted(r.id for r in rows)


@pytest.mark.stack_env(RECOVERY_UPLOADED_GRACE_S="0")
def test_sweep_keeps_the_row_when_enqueue_fails(stack, owner) -> None:
    row = _row(owner)
    time.sleep(0.01)

    def broken(_file_id: str) -> None:
        raise ConnectionError("broker down")

    report = fp.recover_files(settings=get_settings(), send=broken)
    assert report.requeued == []
    assert get_row(File, row.id).status == FileStatus.UPLOADED
    time.sleep(0.01)
    sent: list[str] = []
    assert fp.recover_files(settings=get_settings(), send=sent.append).requeued == [row.id]


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="0.01")
def test_production_refuses_test_hooks(stack, monkeypatch) -> None:
    from pydantic import ValidationError

    from contextq.settings import Settings

    monkeypatch.setenv("ENVIRONMENT", "production")
    with pytest.raises(ValidationError, match="TEST_"):
        Settings()


@pytest.mark.stack_env(RECOVERY_UPLOADED_GRACE_S="0")
@BOTH_BACKENDS
def test_a_waiting_row_is_re_enqueued_with_backoff_not_every_sweep(stack, owner) -> None:
    """A long queue backlog leaves rows `uploaded` for a while: the sweep re-enqueues each
    at most once per (doubling) wait, instead of flooding the queue every run."""
    row = _row(owner)
    time.sleep(0.01)
    sent: list[str] = []
    fp.recover_files(settings=get_settings(), send=sent.append)
    fp.recover_files(settings=get_settings(), send=sent.append)
    assert sent == [row.id]
    first = get_row(File, row.id)
    assert first.enqueues == 1 and q.aware(first.recover_after) > utcnow()
    with session_scope() as s:  # time passes
        s.get(File, row.id).recover_after = utcnow() - timedelta(seconds=1)
    fp.recover_files(settings=get_settings(), send=sent.append)
    assert sent == [row.id, row.id]
    assert get_row(File, row.id).enqueues == 2
    assert fp.recover_backoff_s(grace_s=30, enqueues=0, cap_s=86400) == 30
    assert fp.recover_backoff_s(grace_s=30, enqueues=3, cap_s=86400) == 240
    assert fp.recover_backoff_s(grace_s=30, enqueues=50, cap_s=86400) == 86400
