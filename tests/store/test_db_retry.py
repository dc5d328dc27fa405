"""`store.db.retry_unavailable` over a real SQLite file held by an exclusive transaction:
it waits its whole budget (the last try is at the deadline), then gives up."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from store.db import UNAVAILABLE_ERRORS, make_engine, retry_unavailable


def _locked_database(tmp_path: Path) -> tuple[Engine, sqlite3.Connection]:
    path = tmp_path / "locked.db"
    engine = make_engine(f"sqlite:///{path}", lock_timeout_s=0.05)  # "locked" after 50 ms
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return engine, holder


def _insert(engine: Engine) -> int:
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO t VALUES (1)")
        return int(conn.exec_driver_sql("SELECT count(*) FROM t").scalar_one())


def test_a_database_back_just_before_the_deadline_is_seen(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Tries at 0 and 0.5 s fail; the next wait (1 s) would end past the 1.45 s budget,
    so it is cut to the deadline and that last try finds the lock released at 1.0 s
    (before: the loop gave up at 0.5 s, two thirds of its budget unused)."""
    engine, holder = _locked_database(tmp_path)
    release = threading.Timer(1.0, holder.execute, args=("ROLLBACK",))
    release.start()
    started = time.monotonic()
    try:
        with caplog.at_level(logging.INFO, logger="contextq.db"):
            assert retry_unavailable(lambda: _insert(engine), budget_s=1.45, what="insert") == 1
    finally:
        release.join()
        holder.close()
        engine.dispose()
    assert time.monotonic() - started >= 1.0
    waits = [r.message for r in caplog.records if "database unavailable, again in" in r.message]
    assert len(waits) >= 2 and "again in 0.5s" in waits[0], waits
    assert "again in 1.0s" not in waits[1]  # cut to the deadline
    assert any("insert: database back after" in r.message for r in caplog.records)


def test_it_gives_up_once_the_budget_has_passed(tmp_path: Path) -> None:
    engine, holder = _locked_database(tmp_path)
    started = time.monotonic()
    try:
        with pytest.raises(UNAVAILABLE_ERRORS):
            retry_unavailable(lambda: _insert(engine), budget_s=0.8, what="insert")
    finally:
        holder.close()
        engine.dispose()
    assert 0.8 <= time.monotonic() - started < 5.0
