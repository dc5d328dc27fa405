"""Engine and sessions.

SQLite (the default) runs in WAL mode with a busy timeout; write sessions
start with BEGIN IMMEDIATE so a read-then-write never fails with "database is
locked", read sessions use a deferred BEGIN. PostgreSQL via psycopg 3. Forked
processes (Celery prefork children) must call `dispose_after_fork()`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy.exc
from sqlalchemy import Engine, create_engine, event
from sqlmodel import Session

from contextq.settings import Settings, get_settings

log = logging.getLogger("contextq.db")
T = TypeVar("T")

# the database is locked past the timeout, unreachable, or has no pooled connection free:
# the driver's operational errors. The API answers them 503 (`api/errors.py`); the worker
# waits them out (`retry_unavailable`).
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.DisconnectionError,
    sqlalchemy.exc.TimeoutError,
)


RETRY_FIRST_DELAY_S = 0.5
RETRY_MAX_DELAY_S = 5.0  # the longest a waiting worker sleeps between two tries


def retry_unavailable(fn: Callable[[], T], *, budget_s: float, what: str) -> T:
    """`fn()`, called again while the database is unavailable (backoff 0.5 s doubling to
    RETRY_MAX_DELAY_S) until `budget_s` has passed: the last try is at the deadline, so
    a database back within the budget is always seen; after it the last error is
    raised. `fn` must be one transaction that is safe to run again (a conditional
    update, a claim). Each wait is a WARNING; a success after waiting, an INFO line."""
    started = time.monotonic()
    deadline = started + budget_s
    delay, tries = RETRY_FIRST_DELAY_S, 0
    while True:
        try:
            result = fn()
        except UNAVAILABLE_ERRORS as exc:
            tries += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise
            wait = min(delay, left)
            log.warning("%s: database unavailable, again in %.1fs: %s", what, wait, exc)
            time.sleep(wait)
            delay = min(delay * 2, RETRY_MAX_DELAY_S)
            continue
        if tries:
            waited = time.monotonic() - started
            log.info("%s: database back after %.1fs (%d tries)", what, waited, tries + 1)
        return result


_engine: Engine | None = None
_engine_url: str | None = None
_lock = threading.Lock()

# migrations and tools wait this long for a lock; the API, worker and beat wait
# DATABASE_LOCK_TIMEOUT_S (the API then answers 503 with Retry-After)
DEFAULT_LOCK_TIMEOUT_S = 30.0


def normalise_url(url: str) -> str:
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str, *, lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S) -> Engine:
    """SQLite: a write waits `lock_timeout_s` for the lock ("database is locked" after).
    PostgreSQL: connecting gives up after `lock_timeout_s`, and so does waiting for a
    pooled connection. Either way the error surfaces as an OperationalError / TimeoutError
    that the API answers with 503 (`api/errors.py`)."""
    url = normalise_url(url)
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": lock_timeout_s}
        )
        _install_sqlite_pragmas(engine, busy_timeout_ms=int(lock_timeout_s * 1000))
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=10,
        pool_timeout=lock_timeout_s,
        connect_args={"connect_timeout": max(1, round(lock_timeout_s))},
    )


def _install_sqlite_pragmas(engine: Engine, *, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (pysqlite recipe)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "IMMEDIATE")
        conn.exec_driver_sql(f"BEGIN {mode}")


_lock_timeout: dict[str, float | None] = {"s": None}


def set_lock_timeout(seconds: float) -> None:
    """Wait at most `seconds` for the database in this process (the API calls it with
    DATABASE_LOCK_TIMEOUT_S: a request answers 503 instead of hanging; the worker and
    beat keep the default and wait out a longer lock). Takes effect on the next engine."""
    if seconds != _lock_timeout["s"]:
        _lock_timeout["s"] = seconds
        reset_engine()


def get_engine(settings: Settings | None = None) -> Engine:
    global _engine, _engine_url
    settings = settings or get_settings()
    url = settings.database_url
    with _lock:
        if _engine is None or _engine_url != url:
            if _engine is not None:
                _engine.dispose()
            timeout = _lock_timeout["s"] or DEFAULT_LOCK_TIMEOUT_S
            _engine, _engine_url = make_engine(url, lock_timeout_s=timeout), url
        return _engine


def dispose_after_fork() -> None:
    """Drop connections inherited from the parent without closing them under its feet."""
    with _lock:
        if _engine is not None:
            _engine.dispose(close=False)


def reset_engine() -> None:
    """Forget the engine (tests switch databases)."""
    global _engine, _engine_url
    with _lock:
        if _engine is not None:
            _engine.dispose()
        _engine, _engine_url = None, None


@contextmanager
def session_scope(*, write: bool = True) -> Iterator[Session]:
    """A short transaction: commit on success, roll back on error."""
    bind = get_engine() if write else read_engine()
    with Session(bind=bind, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


_read_engines: dict[int, Engine] = {}


def read_engine() -> Engine:
    """The engine with a deferred BEGIN (reads never take SQLite's write lock); built once
    per engine rather than per session, since reads are the API's hottest path."""
    engine = get_engine()
    cached = _read_engines.get(id(engine))
    if cached is None or cached.engine is not engine:
        cached = engine.execution_options(sqlite_begin="DEFERRED")
        _read_engines.clear()  # only the current engine's is ever needed
        _read_engines[id(engine)] = cached
    return cached


def read_session() -> Session:
    return Session(bind=read_engine(), expire_on_commit=False)


def migrate(settings: Settings | None = None) -> None:
    """Bring the schema to the newest Alembic revision."""
    from alembic import command  # noqa: PLC0415 - Alembic, for migrations only
    from alembic.config import Config  # noqa: PLC0415

    settings = settings or get_settings()
    cfg = Config()
    migrations = Path(__file__).resolve().parent.parent / "migrations"
    cfg.set_main_option("script_location", str(migrations))
    cfg.set_main_option("sqlalchemy.url", normalise_url(settings.database_url).replace("%", "%%"))
    if settings.database_url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    command.upgrade(cfg, "head")
