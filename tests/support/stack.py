"""One environment for every part of the stack under test.

`StackEnv` holds the env vars that the API, the worker, beat and the test
process must agree on (DATA_DIR, DATABASE_URL, REDIS_URL, ENVIRONMENT=test and
any limits a test sets). `activate()` applies them to the test process (and
resets the cached settings and engine); `subprocess_env()` gives the env for
children.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import PROJECT_ROOT

# Fast defaults for tests: small sweeps, short limits; a test overrides what it needs.
TEST_DEFAULTS: dict[str, str] = {
    "ENVIRONMENT": "test",
    "ORT_DISABLE_TELEMETRY": "1",
    "TASK_SOFT_TIME_LIMIT_S": "50",
    "TASK_TIME_LIMIT_S": "60",
    "RECOVERY_SWEEP_INTERVAL_S": "3600",  # tests that want the sweep turn it on
    "RECOVERY_UPLOADED_GRACE_S": "1",
}


@dataclass
class StackEnv:
    data_dir: Path
    redis_url: str
    database_url: str | None = None  # None: SQLite file in data_dir
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """Only the contextq variables (what `activate` sets in the test process)."""
        out = dict(TEST_DEFAULTS)
        out["DATA_DIR"] = str(self.data_dir)
        out["REDIS_URL"] = self.redis_url
        if self.database_url:
            out["DATABASE_URL"] = self.database_url
        out.update(self.overrides)
        return out

    def with_overrides(self, **overrides: object) -> StackEnv:
        """A copy with more env vars (values are str()-ed; None removes a variable)."""
        merged = dict(self.overrides)
        for key, value in overrides.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = str(value)
        return StackEnv(self.data_dir, self.redis_url, self.database_url, merged)

    def subprocess_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        # a test-process DATABASE_URL must not leak into a SQLite stack, nor the metrics
        # directory an in-process app of an earlier test set up (children count into
        # their own DATA_DIR/metrics)
        env.pop("DATABASE_URL", None)
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        env.update(self.env)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(PROJECT_ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
        )
        env.setdefault("PYTHONUNBUFFERED", "1")
        if extra:
            env.update(extra)
        return env

    def activate(self, monkeypatch: object | None = None) -> None:
        """Apply the env to this process and reset cached settings/engine.

        Pass pytest's `monkeypatch` so the env is restored after the test.
        """
        if monkeypatch is not None:
            if "DATABASE_URL" not in self.env:
                monkeypatch.delenv("DATABASE_URL", raising=False)  # type: ignore[attr-defined]
            for key, value in self.env.items():
                monkeypatch.setenv(key, value)  # type: ignore[attr-defined]
        else:
            if "DATABASE_URL" not in self.env:
                os.environ.pop("DATABASE_URL", None)
            os.environ.update(self.env)
        reset_process_state()


def reset_process_state() -> None:
    """Forget cached settings, the engine and the producer (after env changes), once the
    checkpoints of the writes made so far are written (with the engine they were made
    in)."""
    from contextq.settings import get_settings
    from service.history.checkpoint import flush_checkpoints
    from store import db

    flush_checkpoints()

    from store.blobs import forget_blob_stores

    get_settings.cache_clear()
    forget_blob_stores()  # credentials come from the environment, not from the settings
    db.reset_engine()
    from service import enqueue

    enqueue.reset()
