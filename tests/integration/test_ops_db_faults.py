"""The database locked or unreachable for 5 s (SPEC §11): every route answers 503 with
Retry-After or succeeds, never 500; an upload is refused cleanly or completes; nothing
is half-written. SQLite held by an exclusive transaction; PostgreSQL stopped and
started. Real API and worker processes throughout."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from contextq.settings import get_settings
from store.history_tables import StoredMessage
from store.tables import File
from tests.support.db import all_rows
from tests.support.files import upload, wait_file_done

pytestmark = pytest.mark.integration

OUTAGE_S = 5.0


class Traffic:
    """Mixed requests in a loop while the database is away; every answer is kept."""

    def __init__(self, client: Any, ready_id: str, conversation_id: str) -> None:
        self.client = client
        self.ready_id = ready_id
        self.cid = conversation_id
        self.answers: list[tuple[str, int, str | None]] = []
        self.details: list[str] = []
        self.accepted_files: list[str] = []
        self.messages_stored = 0
        self.stop = threading.Event()

    def _one(self, i: int) -> None:
        c, kind = self.client, i % 6
        if kind == 0:
            data = f"uploaded during the outage {i}\n".encode()
            r = upload(c, f"during-{i}.txt", data, expect=None)
            if r.status_code == 202:
                self.accepted_files.append(r.json()["id"])
        elif kind == 1:
            r = c.get(f"/v1/files/{self.ready_id}")
        elif kind == 2:
            r = c.post(
                f"/v1/conversations/{self.cid}/messages",
                json={"role": "user", "content": f"message {i}"},
            )
            self.messages_stored += r.status_code == 201
        elif kind == 3:
            r = c.get(f"/v1/conversations/{self.cid}/context")
        elif kind == 4:
            r = c.get("/v1/files", params={"limit": 5})
        else:
            r = c.get("/healthz")
        self.answers.append((r.request.method, r.status_code, r.headers.get("retry-after")))
        if r.status_code >= 500:
            self.details.append(f"{r.request.method} {r.request.url.path} {r.text[:200]}")

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            self._one(i)
            i += 1


def _during_outage(client: Any, outage: Callable[[], None]) -> Traffic:
    ready = wait_file_done(client, upload(client, "before.txt", b"before the outage\n")["id"])
    cid = client.post("/v1/conversations", json={}).json()["id"]
    traffic = Traffic(client, ready["id"], cid)
    thread = threading.Thread(target=traffic.run)
    thread.start()
    try:
        time.sleep(0.5)
        outage()
        time.sleep(1.0)
    finally:
        traffic.stop.set()
        thread.join(60)
    return traffic


def _check(traffic: Traffic, client: Any) -> None:
    statuses = Counter(status for _m, status, _r in traffic.answers)
    assert set(statuses) <= {200, 201, 202, 503}, statuses
    assert statuses[503] > 0, statuses  # the outage was seen ...
    assert all(retry == "5" for _m, s, retry in traffic.answers if s == 503), traffic.details
    assert statuses[200] > 0 and statuses[202] + statuses[201] > 0  # ... and so was service
    # nothing half-written: exactly the accepted uploads have rows, and each ends ready
    during = {f.id for f in all_rows(File) if f.filename.startswith("during-")}
    assert during == set(traffic.accepted_files)
    for file_id in traffic.accepted_files:
        assert wait_file_done(client, file_id, timeout=90)["status"] == "ready"
    assert len(all_rows(StoredMessage, conversation_id=traffic.cid)) == traffic.messages_stored


@pytest.mark.stack_env(DATABASE_LOCK_TIMEOUT_S="1")
def test_sqlite_held_by_an_exclusive_transaction_for_5_s(
    stack: Any, worker: Any, api_server: Any, client: Any
) -> None:
    def hold_the_lock() -> None:
        db = sqlite3.connect(get_settings().data_dir / "contextq.db", isolation_level=None)
        try:
            db.execute("BEGIN EXCLUSIVE")
            time.sleep(OUTAGE_S)
            db.execute("ROLLBACK")
        finally:
            db.close()

    traffic = _during_outage(client, hold_the_lock)
    writes_refused = [m for m, s, _r in traffic.answers if s == 503]
    assert set(writes_refused) == {"POST"}, writes_refused  # WAL: reads go on meanwhile
    _check(traffic, client)


@pytest.mark.postgres
@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_postgresql_stopped_and_started(
    stack: Any, postgres_server: Any, worker: Any, api_server: Any, client: Any
) -> None:
    if not postgres_server.owned:
        pytest.skip("POSTGRES_TEST_URL points at a server this test cannot stop")

    def stop_and_start() -> None:
        postgres_server.stop_server()
        try:
            time.sleep(OUTAGE_S)
        finally:
            postgres_server.start_server()

    traffic = _during_outage(client, stop_and_start)
    _check(traffic, client)
