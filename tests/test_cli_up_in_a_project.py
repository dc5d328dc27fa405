"""`contextq up` as a user starts it: the console script, inside an agent project of their
own, with no DATA_DIR and no CONTEXTQ_* settings (docs/operations.md#how-contextq-up-runs-the-stack,
docs/cli.md, docs/operations.md#running-the-service).

The project holds packages named like ours (`api/`, `tasks/`, `worker/`, `service/`,
`store/`, `cli/`, `migrations/`, the most common names in such projects), each of which
records its import in a marker file and raises. Every part (the API's `--workers`
processes, the worker and its pool, beat, Flower, the migrations, and each part started
alone) must run contextq's own code; the first scrape of the fresh stack must hold every
metrics family; and the CLI in that directory must find the stack `up` started on a
port of its choosing.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from contextq.strategy_options import STRATEGY_NAMES
from store import metrics
from tests.support.procs import ManagedProcess, free_port, wait_until
from worker import names

pytestmark = pytest.mark.integration

CONTEXTQ = str(Path(sys.executable).parent / "contextq")  # the console script users run
DECOYS = ("api", "tasks", "worker", "service", "store", "cli", "migrations")
DECOY_INIT = """\
import pathlib
pathlib.Path(__file__).resolve().parent.parent.joinpath("IMPORTED").open("a").write(
    __name__ + "\\n"
)
raise RuntimeError("the project's own {name!r} package was imported in place of contextq's")
"""
START_TIMEOUT_S = 150.0
# settings of the test run that would point the stack or the CLI elsewhere
NOT_INHERITED = (
    "DATA_DIR",
    "DATABASE_URL",
    "REDIS_URL",
    "CONTEXTQ_API_URL",
    "CONTEXTQ_API_KEY",
    "PYTHONPATH",
    "PROMETHEUS_MULTIPROC_DIR",
    "ENVIRONMENT",
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    env["COLUMNS"] = "200"  # rich tables in captured output
    return {**env, **extra}


@dataclass
class Project:
    root: Path
    up: ManagedProcess
    api_url: str
    key: str
    first_scrape: str  # /metrics right after the banner, before any other request

    @property
    def data_dir(self) -> Path:
        return self.root / ".contextq"

    def imported(self) -> str:
        marker = self.root / "IMPORTED"
        return marker.read_text() if marker.exists() else ""

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CONTEXTQ, *args],
            cwd=self.root,
            env=_env(**env),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    root = tmp_path_factory.mktemp("agent-project")
    for name in DECOYS:
        (root / name).mkdir()
        (root / name / "__init__.py").write_text(DECOY_INIT.format(name=name))
    (root / "notes.txt").write_text("Meeting notes: ship on Friday. sentinel-5521\n")
    port, flower_port = free_port(), free_port()
    argv = [CONTEXTQ, "up", "--port", str(port), "--flower-port", str(flower_port)]
    # two API processes: uvicorn's supervisor spawns them afresh (not forked)
    argv += ["--concurrency", "1", "--api-workers", "2"]
    up = ManagedProcess(
        argv,
        env=_env(),
        log_path=root.parent / "up.log",
        name="contextq up",
        cwd=root,
    )
    try:
        up.start_and_wait(lambda: up.wait_for_log(r"API key: cq_\S+", timeout=START_TIMEOUT_S))
        first = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30)
        assert first.status_code == 200, first.text
        key = re.search(r"API key: (cq_\S+)", up.log()).group(1)  # type: ignore[union-attr]
        yield Project(root, up, f"http://127.0.0.1:{port}", key, first.text)
    finally:
        up.stop(timeout=30)


def _python_parts(up: ManagedProcess) -> list[psutil.Process]:
    parts = psutil.Process(up.pid).children()
    return [p for p in parts if "python" in os.path.basename((p.cmdline() or [""])[0])]


def test_every_part_runs_contextqs_own_code(project: Project) -> None:
    log = project.up.log()
    lines = [line for line in log.splitlines() if re.match(r"(API|Docs|Flower|API key): ", line)]
    assert [line.split(": ")[0] for line in lines] == ["API", "Docs", "Flower", "API key"], log
    wait_until(  # the worker imported our tasks and answers
        lambda: httpx.get(f"{project.api_url}/healthz", timeout=10).json()["workers"] == "ok",
        timeout=30,
        what="a live worker",
    )
    parts = _python_parts(project.up)
    commands = [" ".join(p.cmdline()) for p in parts]
    for marker in ("uvicorn api.asgi:app", "worker.app worker", "worker.app beat", "flower"):
        assert any(marker in c for c in commands), (marker, commands)
    for part in parts:  # safe-path mode, and in the working directory the user chose
        assert part.cmdline()[1:3] == ["-P", "-m"], part.cmdline()
        assert Path(part.cwd()) == project.root
    # uvicorn's API processes (and multiprocessing's resource tracker) inherit the flag
    spawned = [c for p in parts if p.cmdline()[3] == "uvicorn" for c in p.children()]
    assert sum("spawn_main" in " ".join(c.cmdline()) for c in spawned) == 2, spawned
    assert all("-P" in c.cmdline() for c in spawned)
    assert project.imported() == ""
    for part in ("api", "worker", "beat", "flower"):
        part_log = (project.data_dir / "logs" / f"{part}.log").read_text()
        assert "imported in place of contextq" not in part_log, part


def _samples(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return found


def test_the_first_scrape_of_a_fresh_stack_holds_every_family(project: Project) -> None:
    s = _samples(project.first_scrape)
    compactions = s["contextq_compactions_total"]
    assert compactions == {
        (("method", m), ("outcome", o)): 0.0 for m, o in metrics.COMPACTION_SERIES
    }
    assert s["contextq_quota_refusals_total"] == {
        (("limit", limit),): 0.0 for limit in metrics.QUOTA_LIMITS
    }
    assert s["contextq_blobs_deleted_total"] == {(("kind", k),): 0.0 for k in metrics.BLOB_KINDS}
    durations = s["contextq_task_duration_seconds_count"]
    for task in names.TASKS:
        for state in ("SUCCESS", "FAILURE"):
            assert (("state", state), ("task", task)) in durations, (task, state)
    # nothing was uploaded or compacted yet (beat's sweeps may already have run)
    assert durations[(("state", "SUCCESS"), ("task", names.PROCESS_FILE))] == 0.0
    assert durations[(("state", "SUCCESS"), ("task", names.COMPACT_CONVERSATION))] == 0.0
    builds = s["contextq_context_build_duration_seconds_count"]
    for strategy in STRATEGY_NAMES:
        for fmt in ("openai", "anthropic"):
            assert builds[(("format", fmt), ("strategy", strategy))] == 0.0
    requests = s["contextq_http_request_duration_seconds_count"]
    assert (("method", "GET"), ("route", "/metrics"), ("status", "200")) in requests
    for gauge in ("contextq_files", "contextq_queue_depth", "contextq_live_workers"):
        assert gauge in s, gauge
    assert s["contextq_files"][(("status", "ready"),)] == 0.0


def test_the_cli_in_the_project_finds_the_stack_up_started(project: Project) -> None:
    assert (project.data_dir / "api-url").read_text().strip() == project.api_url
    done = project.cli("upload", "notes.txt")  # no --api, --key or CONTEXTQ_* settings
    assert done.returncode == 0, done.stderr[-3000:]
    row = next(line for line in done.stdout.splitlines() if "notes.txt" in line)
    assert "ready" in row and "text" in row, done.stdout
    assert project.imported() == ""
    # CONTEXTQ_API_URL (and --api) still come first
    dead = f"http://127.0.0.1:{free_port()}"
    elsewhere = project.cli("upload", "notes.txt", CONTEXTQ_API_URL=dead)
    assert elsewhere.returncode == 1
    assert f"cannot reach {dead}" in elsewhere.stdout  # the table's note


def test_each_part_alone_runs_contextqs_own_code(project: Project) -> None:
    broker = (project.data_dir / "broker-url").read_text().strip()
    env = _env(REDIS_URL=broker)
    port = free_port()
    node = f"alone-{os.getpid()}@{socket.gethostname()}"
    logs = project.root.parent
    api = ManagedProcess(
        [CONTEXTQ, "api", "--port", str(port), "--workers", "1"],
        env=env,
        log_path=logs / "api-alone.log",
        name="contextq api",
        cwd=project.root,
    )
    worker = ManagedProcess(
        [CONTEXTQ, "worker", "--concurrency", "1", "--hostname", node],
        env=env,
        log_path=logs / "worker-alone.log",
        name="contextq worker",
        cwd=project.root,
    )
    with api, worker:
        wait_until(
            lambda: _status(f"http://127.0.0.1:{port}/healthz") == 200,
            timeout=90,
            interval=0.3,
            what=f"contextq api alone\n{api.log()[-3000:]}",
        )
        ping = ["health", "worker", "--node", node]
        wait_until(
            lambda: project.cli(*ping, REDIS_URL=broker).returncode == 0,
            timeout=90,
            interval=0.5,
            what=f"contextq worker alone\n{worker.log()[-3000:]}",
        )
        for part in (api, worker):  # exec'd: the part is the process the command started
            assert psutil.Process(part.pid).cmdline()[1:3] == ["-P", "-m"]
    assert project.imported() == ""


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return 0
