"""Shared fixtures: real Valkey, real SQLite/PostgreSQL, real worker/beat/API processes.

Fixtures (stable names; other suites rely on them):

- `valkey_server` (session)  one real Valkey server for the whole run.
- `redis_url`                a fresh logical database on it for this test.
- `stack`                    a `StackEnv` (tmp DATA_DIR, SQLite file, `redis_url`), migrated
                             and *activated* in the test process (env set, settings/engine reset).
                             Parametrise the backend with `@pytest.mark.parametrize("stack",
                             ["postgres"], indirect=True)`; default is SQLite. "s3" and
                             "postgres+s3": the same with BLOB_STORE=s3.
- `make_stack(**env)`        activate more env vars on the current stack (returns the new one).
- `owner`, `make_owner(name)` an owner + API key (`.key`, `.owner_id`, `.headers`).
- `worker_factory(stack=None, **kw)` start a real `celery worker` subprocess (all stopped at
                             teardown).
- `beat_factory(stack=None)` start a real `celery beat` subprocess.
- `api_server`               a uvicorn subprocess serving `api.main:app` for `stack`.
- `client`                   httpx client to `api_server` with `owner`'s key.
- `app_client`               FastAPI TestClient in-process (pure API tests, no server process).
- `postgres_server` (session) / `postgres_url`: a real PostgreSQL; tests using them are
                             skipped when no PostgreSQL server binaries exist at all (failed
                             under CI=true).
- `s3_server` (session)      a real S3 endpoint (moto's server mode); the `stack` param
                             "s3" runs the stack with BLOB_STORE=s3 on a fresh bucket
                             (mark such tests `s3`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import postgres as pg
from tests.support import s3
from tests.support.api import ApiServer, in_process_client
from tests.support.db import OwnerKey, create_owner, migrate
from tests.support.procs import reap_all
from tests.support.stack import StackEnv, reset_process_state
from tests.support.valkey import db_url, start_valkey
from tests.support.worker import CeleryBeat, CeleryWorker


@pytest.fixture(scope="session", autouse=True)
def _reap_processes() -> Iterator[None]:
    """Whatever a test left running is stopped at the end of the session."""
    yield
    reap_all()


# --- broker -------------------------------------------------------------------
@pytest.fixture(scope="session")
def valkey_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    server = start_valkey(tmp_path_factory.mktemp("valkey"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(valkey_server: Any) -> str:
    return db_url(valkey_server)


# --- PostgreSQL ---------------------------------------------------------------
@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pg.PostgresServer]:
    pg.require_available()  # skipped outside CI when missing, failed under CI=true
    server = pg.PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: pg.PostgresServer) -> str:
    return postgres_server.create_database()


# --- S3 -----------------------------------------------------------------------------
@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[s3.S3Server]:
    s3.require()
    server = s3.S3Server(tmp_path_factory.mktemp("moto")).start()
    try:
        yield server
    finally:
        server.stop()


# --- the stack env --------------------------------------------------------------
@pytest.fixture
def stack(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[StackEnv]:
    backend = getattr(request, "param", "sqlite")
    database, _, blob_store = backend.partition("+")  # "s3": SQLite, blobs in a bucket
    if database == "s3":
        database, blob_store = "sqlite", "s3"
    database_url = None
    blobs: dict[str, str] = {}
    if database == "postgres":
        database_url = request.getfixturevalue("postgres_url")
    elif database != "sqlite" or blob_store not in ("", "s3"):
        raise ValueError(f"unknown stack backend {backend!r}")
    if blob_store == "s3":  # a fresh bucket of the session's moto server
        server = request.getfixturevalue("s3_server")
        blobs = server.env(server.create_bucket())
    env = StackEnv(data_dir=tmp_path / "data", redis_url=redis_url, database_url=database_url)
    env = env.with_overrides(**blobs)
    # per-test env from @pytest.mark.stack_env(KEY=value, ...)
    for marker in request.node.iter_markers("stack_env"):
        env = env.with_overrides(**marker.kwargs)
    env.activate(monkeypatch)
    migrate()
    yield env
    reset_process_state()


@pytest.fixture
def make_stack(stack: StackEnv, monkeypatch: pytest.MonkeyPatch) -> Callable[..., StackEnv]:
    """Add env vars to the stack (test process too); returns the new StackEnv."""

    def make(**overrides: object) -> StackEnv:
        new = stack.with_overrides(**overrides)
        new.activate(monkeypatch)
        return new

    return make


# --- owners ---------------------------------------------------------------------
@pytest.fixture
def make_owner(stack: StackEnv) -> Callable[[str], OwnerKey]:
    return create_owner


@pytest.fixture
def owner(make_owner: Callable[[str], OwnerKey]) -> OwnerKey:
    return make_owner("alice")


# --- processes ------------------------------------------------------------------
@pytest.fixture
def worker_factory(stack: StackEnv, tmp_path: Path) -> Iterator[Callable[..., CeleryWorker]]:
    started: list[CeleryWorker] = []

    def make(env: StackEnv | None = None, *, start: bool = True, **kw: Any) -> CeleryWorker:
        w = CeleryWorker(env or stack, log_dir=tmp_path / "logs", **kw)
        started.append(w)
        return w.start() if start else w

    yield make
    for w in started:
        w.stop(timeout=10)


@pytest.fixture
def worker(worker_factory: Callable[..., CeleryWorker]) -> CeleryWorker:
    return worker_factory()


@pytest.fixture
def beat_factory(stack: StackEnv, tmp_path: Path) -> Iterator[Callable[..., CeleryBeat]]:
    started: list[CeleryBeat] = []

    def make(env: StackEnv | None = None) -> CeleryBeat:
        b = CeleryBeat(env or stack, log_dir=tmp_path / "logs")
        started.append(b)
        return b.start()

    yield make
    for b in started:
        b.stop(timeout=10)


@pytest.fixture
def api_server(stack: StackEnv, tmp_path: Path) -> Iterator[ApiServer]:
    server = ApiServer(stack, log_dir=tmp_path / "logs").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(api_server: ApiServer, owner: OwnerKey) -> Iterator[Any]:
    with api_server.client(owner.key) as c:
        yield c


@pytest.fixture
def app_client(stack: StackEnv, owner: OwnerKey) -> Iterator[Any]:
    with in_process_client(owner.key) as c:
        yield c


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "stack_env(**env): extra env vars for the `stack` fixture (str values)"
    )
