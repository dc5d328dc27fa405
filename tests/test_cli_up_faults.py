"""Faults under a real `contextq up` (docs/operations.md#running-the-service): every worker process
SIGKILLed while 20 CSVs of 30 MB process, and the broker killed (and restarted by `up`) with 50
uploads queued. Nothing is lost and each file ends `ready` exactly once with its own content:
once is counted from the owner's events (`GET /v1/events` from id 0, one `file.ready`
per file, never two).

Small sweep intervals keep each test well under a minute: the recovery sweep finds the
`processing` row whose worker died every 2 s, and a row whose message died with the
worker's prefetch once it has waited RECOVERY_UPLOADED_GRACE_S.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import psutil
import pytest
import redis

from tests.support.api import api_client
from tests.support.files import upload, wait_file_done
from tests.support.receivers import SseReader
from tests.test_cli_up import Up, _api, _free_port, _key, _wait

pytestmark = pytest.mark.integration

# process_file sleeps 0.5 s after its claim (a test hook), so the kill lands mid-task
FAULT_ENV = {
    "RECOVERY_SWEEP_INTERVAL_S": "2",
    "RECOVERY_UPLOADED_GRACE_S": "8",
    "TEST_PROCESS_DELAY_S": "0.5",
}
MiB = 1024 * 1024
CSV_FILES = 20


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    data_dir = tmp_path_factory.mktemp("up-faults") / "data"
    stack = Up(data_dir, _free_port(), _free_port(), FAULT_ENV, concurrency=2)
    try:
        stack.wait_banner()
        yield stack
    finally:
        stack.kill_everything()


def _csv_body() -> bytes:
    rows = []
    size, i = 0, 1
    while size < 30 * MiB:
        row = f"{i},name-{i},{i * 3.14159:.3f},a comment for row {i} of the table\n"
        rows.append(row)
        size += len(row)
        i += 1
    return "".join(rows).encode()


def _ready_events(reader: SseReader) -> Counter[str]:
    return Counter(e["data"]["id"] for e in reader.events if e["type"] == "file.ready")


def _attempts(up: Up, file_ids: list[str]) -> dict[str, int]:
    """`files.attempts` read from the stack's SQLite file (read-only)."""
    uri = f"file:{up.data_dir / 'contextq.db'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        rows = db.execute("SELECT id, attempts FROM files").fetchall()
    return {file_id: n for file_id, n in rows if file_id in file_ids}


def _exactly_once(up: Up, file_ids: list[str]) -> None:
    """Each file has exactly one `file.ready` event, and nothing failed."""
    reader = SseReader(_api(up), _key(up), last_event_id=0)
    try:
        reader.wait_events(
            lambda _e: set(file_ids) <= set(_ready_events(reader)),
            timeout=30,
            what="a file.ready event for every file",
        )
        time.sleep(1.0)  # a duplicate would have arrived with the others
        counts = _ready_events(reader)
        assert all(counts[f] == 1 for f in file_ids), counts
        failed = [e for e in reader.events if e["type"] == "file.failed"]
        assert failed == []
    finally:
        reader.close()


def test_every_worker_process_sigkilled_while_csvs_process(up: Up) -> None:
    client = api_client(_api(up), _key(up), timeout=120)
    body = _csv_body()
    uploaded: list[dict[str, Any]] = []

    def send_all() -> None:
        for n in range(CSV_FILES):
            head = f"id,name,value,comment\n0,marker-{n:02d}-own-row,0,first row of file {n}\n"
            uploaded.append(upload(client, f"table-{n:02d}.csv", head.encode() + body))

    sender = threading.Thread(target=send_all)
    sender.start()
    try:
        (worker,) = up.part_pids("worker.app worker")

        def some_processing() -> bool:
            listed = client.get("/v1/files", params={"status": "processing"}).json()["data"]
            return bool(listed) and len(uploaded) >= 4

        _wait(some_processing, timeout=60, what="CSVs processing")
        group = [worker, *(p.pid for p in psutil.Process(worker).children())]
        assert len(group) == 3, "the worker and its two pool children"
        up.record_tree()
        os.killpg(worker, signal.SIGKILL)  # every worker process at once
        _wait(
            lambda: [p for p in up.part_pids("worker.app worker") if p != worker],
            timeout=30,
            what="up to start a new worker",
        )
    finally:
        sender.join(180)
    assert len(uploaded) == CSV_FILES
    for n, file in enumerate(uploaded):
        done = wait_file_done(client, file["id"], timeout=90)
        assert done["status"] == "ready", done
        assert done["file_type"] == "csv" and done["size_bytes"] == len(body) + len(
            f"id,name,value,comment\n0,marker-{n:02d}-own-row,0,first row of file {n}\n"
        )
        content = client.get(f"/v1/files/{file['id']}/content").text
        assert re.findall(r"marker-\d\d-own-row", content) == [f"marker-{n:02d}-own-row"]
    assert len(client.get("/v1/files", params={"limit": 200}).json()["data"]) == CSV_FILES
    attempts = _attempts(up, [f["id"] for f in uploaded])
    assert 2 in attempts.values() and max(attempts.values()) <= 2, attempts  # killed mid-task
    _exactly_once(up, [f["id"] for f in uploaded])
    assert up.restart_lines("worker")[0].startswith(
        "worker exited unexpectedly (killed by SIGKILL); restarting it in 1s"
    ), up.stderr
    for pid in group:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    client.close()


def test_broker_killed_with_50_uploads_queued_loses_nothing(up: Up) -> None:
    conf = (up.data_dir / "valkey" / "valkey.conf").read_text()
    port = int(re.search(r"^port (\d+)$", conf, re.M).group(1))  # type: ignore[union-attr]
    assert re.search(r"^appendonly yes$", conf, re.M), conf
    password = (up.data_dir / "valkey-password").read_text().strip()
    client = api_client(_api(up), _key(up))
    (worker,) = up.part_pids("worker.app worker")
    os.killpg(worker, signal.SIGSTOP)  # the uploads wait in the broker's queue
    try:
        queued = [
            upload(client, f"queued-{i:02d}.txt", f"queued file {i:02d} of 50\n".encode())
            for i in range(50)
        ]
        broker = redis.Redis(port=port, password=password, socket_timeout=5)
        assert broker.llen("files") >= 48  # a stopped worker holds at most its prefetch
        time.sleep(1.5)  # appendfsync everysec
        (old,) = up.valkey_servers()
        os.kill(old, signal.SIGKILL)
        _wait(lambda: [p for p in up.valkey_servers() if p != old], timeout=30, what="a new Valkey")

        def answers() -> bool:
            try:
                return bool(broker.ping())
            except redis.RedisError:
                return False

        _wait(answers, timeout=30, what="the restarted broker")
        assert broker.llen("files") >= 48, "the queued messages came back from the AOF"
        broker.close()
    finally:
        os.killpg(worker, signal.SIGCONT)
    for i, body in enumerate(queued):
        done = wait_file_done(client, body["id"], timeout=90)
        assert done["status"] == "ready", done
        text = client.get(f"/v1/files/{body['id']}/content").text
        assert f"queued file {i:02d} of 50" in text
    _exactly_once(up, [b["id"] for b in queued])
    assert httpx.get(f"{_api(up)}/healthz", timeout=10).json()["broker"] == "ok"
    client.close()
