"""The label values `/metrics` starts at 0 (docs/operations.md#running-the-service: every family
from the first scrape) are the ones the code emits: each task the worker registers, each compaction
outcome, each quota limit a refusal names. The scrape of a fresh stack itself is checked in
tests/test_cli_up_in_a_project.py."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

from contextq.history.compaction import CompactionOutcome
from store import metrics
from worker import names

ROOT = Path(__file__).resolve().parent.parent

REGISTERED = """
import json
from worker.app import app
app.loader.import_default_modules()
print(json.dumps(sorted(n for n in app.tasks if not n.startswith("celery."))))
"""


def test_every_task_the_worker_registers_is_a_known_series(tmp_path: Path) -> None:
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:1/0", "DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-P", "-c", REGISTERED],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == sorted(names.TASKS)


def test_every_compaction_outcome_is_a_known_series() -> None:
    methods = typing.get_args(typing.get_type_hints(CompactionOutcome)["method"])
    emitted = {metrics.compaction_labels({"method": m}) for m in methods}
    emitted |= {
        metrics.compaction_labels({"skipped": "nothing to compact"}),
        metrics.compaction_labels(None, failed=True),
    }
    assert emitted == set(metrics.COMPACTION_SERIES)


def _quota_limits_named_in(directory: Path) -> set[str]:
    found = set()
    for path in directory.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "QuotaExceeded":
                for kw in node.keywords:
                    if kw.arg == "limit" and isinstance(kw.value, ast.Constant):
                        found.add(kw.value.value)
    return found


def test_every_quota_limit_a_refusal_names_is_a_known_series() -> None:
    named = set().union(*(_quota_limits_named_in(ROOT / d) for d in ("api", "service", "store")))
    assert named == set(metrics.QUOTA_LIMITS)
