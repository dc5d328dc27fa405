"""Faults the beat sweeps repair (docs/operations.md#running-the-service), with real processes: the
API SIGKILLed between a commit and its enqueue, and two beat processes running the sweeps side by
side."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest

from store.history_tables import Compaction
from store.tables import File, FileStatus
from tests.api.history_data import agent_history
from tests.support.api import ApiServer
from tests.support.db import all_rows, get_row
from tests.support.files import upload
from tests.support.procs import free_port, wait_until

pytestmark = pytest.mark.integration


@pytest.mark.stack_env(RECOVERY_SWEEP_INTERVAL_S="1", RECOVERY_UPLOADED_GRACE_S="1")
def test_api_killed_between_commit_and_enqueue_the_sweep_recovers_the_row(
    stack, tmp_path, worker_factory, beat_factory, owner
) -> None:
    dying = ApiServer(stack, log_dir=tmp_path / "logs", app="tests.support.dying_api:app")
    with dying, dying.client(owner.key) as client:
        with pytest.raises(httpx.TransportError):  # no answer: the process died
            upload(client, "orphan.txt", b"committed, never enqueued\n")
        wait_until(lambda: not dying.alive(), timeout=10, what="the API to be dead")
    (row,) = all_rows(File, owner_id=owner.owner_id)
    assert (row.status, row.attempts, row.enqueues) == (FileStatus.UPLOADED, 0, 0)
    worker_factory()
    beat_factory()

    def ready() -> File | None:
        current = get_row(File, row.id)
        return current if current is not None and current.status == FileStatus.READY else None

    done = wait_until(ready, timeout=60, what="the sweep to recover the row")
    assert (done.attempts, done.enqueues) == (1, 1)


def _conversation(client: Any, threshold: float) -> str:
    cid = client.post(
        "/v1/conversations", json={"model": "gpt-4o", "context_threshold": threshold}
    ).json()["id"]
    added = client.post(
        f"/v1/conversations/{cid}/messages", json={"messages": agent_history(200, pinned=1)}
    )
    assert added.status_code == 201, added.text
    return str(cid)


@pytest.mark.stack_env(
    RECOVERY_SWEEP_INTERVAL_S="1",
    RECOVERY_UPLOADED_GRACE_S="2",
    COMPACTION_SWEEP_INTERVAL_S="1",
    HISTORY_COMPACTION_MAX_TOKENS="1000000",
    MAX_CONTEXT_TOKENS="20000",
)
def test_two_beats_for_three_intervals_compact_once_and_enqueue_once(
    stack, tmp_path, worker_factory, beat_factory, owner
) -> None:
    # rows and conversations written while no broker answers: only the sweeps can act
    dead_broker = stack.with_overrides(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    with ApiServer(dead_broker, log_dir=tmp_path / "logs") as api, api.client(owner.key) as c:
        files = [upload(c, f"f{i}.txt", f"orphan {i}\n".encode())["id"] for i in range(6)]
        due = [_conversation(c, 0.1) for _ in range(3)]  # past 2 000 tokens
        small = _conversation(c, 0.99)
    time.sleep(2)  # every row older than the grace
    worker = worker_factory(concurrency=2)
    beats = [beat_factory(), beat_factory()]
    wait_until(
        lambda: (
            all(get_row(File, f).status == FileStatus.READY for f in files)
            and all(all_rows(Compaction, conversation_id=cid) for cid in due)
        ),
        timeout=60,
        interval=0.2,
        what="every file ready and every due conversation compacted",
    )
    time.sleep(3.5)  # three more sweep intervals of both beats
    assert all(b.alive() for b in beats)
    for b in beats:  # each beat really sent its sweeps
        assert len(re.findall(r"Sending due task recover-files", b.log())) >= 3
        assert len(re.findall(r"Sending due task sweep-compactions", b.log())) >= 3
    for cid in due:
        assert len(all_rows(Compaction, conversation_id=cid)) == 1
    assert all_rows(Compaction, conversation_id=small) == []
    for file_id in files:
        row = get_row(File, file_id)
        assert row is not None and (row.attempts, row.enqueues) == (1, 1)
    received = re.findall(r"Task contextq\.process_file\[[0-9a-f-]+\] received", worker.log())
    assert len(received) == len(files), "each file enqueued once"
