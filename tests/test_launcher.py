"""`cli.launcher` without a whole stack: restart policy, supervision of real short-lived
processes, port choice, and the package boundaries after the move out of the engine."""

from __future__ import annotations

import ast
import importlib
import socket
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.launcher.ports import AskedPort, pick_free_ports, reserve
from cli.launcher.processes import LaunchError, ProcessTable
from cli.launcher.supervision import DeathLog, GaveUp, RestartPolicy, Supervisor, describe_exit

ROOT = Path(__file__).resolve().parent.parent


# -- restart policy -------------------------------------------------------------------------


def test_backoff_doubles_from_one_second_to_thirty() -> None:
    policy = RestartPolicy()
    assert [policy.delay_s(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]


def test_only_deaths_within_the_window_count() -> None:
    deaths = DeathLog(RestartPolicy(window_s=300))
    assert [deaths.record(t, ran_for_s=5) for t in (0, 10, 20, 30)] == [1, 2, 3, 4]
    assert deaths.record(305, ran_for_s=5) == 4, "the death at t=0 is older than 5 minutes"
    assert deaths.record(1000, ran_for_s=5) == 1


def test_backoff_grows_while_a_part_keeps_dying_and_resets_after_a_stable_run() -> None:
    policy = RestartPolicy()
    deaths = DeathLog(policy)
    delays = []
    for i in range(8):  # dies 80 s after each start: never 5 deaths in 5 minutes
        deaths.record(i * 80.0, ran_for_s=80)
        delays.append(policy.delay_s(deaths.streak))
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]
    deaths.record(2000.0, ran_for_s=400)  # ran 400 s (over 5 minutes) before this death
    assert policy.delay_s(deaths.streak) == 1


def test_exit_descriptions() -> None:
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(3) == "exit code 3"


# -- supervision of real processes -----------------------------------------------------------


@pytest.fixture
def table(tmp_path: Path) -> Iterator[ProcessTable]:
    # not a subreaper: the test runner must not adopt other tests' orphans
    table = ProcessTable(log_dir=tmp_path / "logs", env={"PATH": "/usr/bin:/bin"}, subreaper=False)
    try:
        yield table
    finally:
        table.stop(grace_s=2)


def _supervise(supervisor: Supervisor, seconds: float) -> None:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        supervisor.check()
        time.sleep(0.01)


def test_a_crashing_part_is_restarted_then_given_up_on(table: ProcessTable) -> None:
    crash = [sys.executable, "-c", "import sys; print('boom-4471', flush=True); sys.exit(3)"]
    child = table.spawn("crasher", crash, stop_order=1)
    lines: list[str] = []
    fast = RestartPolicy(first_delay_s=0.05, max_delay_s=0.2)
    supervisor = Supervisor(table, report=lines.append, policy=fast)
    with pytest.raises(GaveUp) as raised:
        _supervise(supervisor, 20)
    assert len(lines) == 4, lines  # one line per restart; the fifth death gives up
    assert lines[0] == (
        "crasher exited unexpectedly (exit code 3); restarting it in 0.05s "
        "(death 1 within 5 minutes; up gives up at 5)"
    )
    assert [line.split("restarting it in ")[1].split("s ")[0] for line in lines] == [
        "0.05",
        "0.1",
        "0.2",
        "0.2",
    ]
    message = str(raised.value)
    assert message.startswith("crasher died 5 times within 5 minutes (last: exit code 3)")
    assert "boom-4471" in message, "the last lines of the part's log say why"
    assert child.log_path.read_text().count("boom-4471") == 5


def test_a_part_that_stays_up_is_left_alone(table: ProcessTable) -> None:
    child = table.spawn(
        "sleeper", [sys.executable, "-c", "import time; time.sleep(60)"], stop_order=1
    )
    lines: list[str] = []
    _supervise(Supervisor(table, report=lines.append), 0.5)
    assert lines == [] and child.returncode is None


# -- ports -----------------------------------------------------------------------------------


def test_a_picked_port_is_never_an_asked_one() -> None:
    for _ in range(20):
        (asked,) = pick_free_ports(1)
        held = reserve([AskedPort("API", "127.0.0.1", asked, "--port")])
        try:
            for _ in range(50):
                picked = pick_free_ports(3, avoid=held.ports)
                assert asked not in picked
                assert len(set(picked)) == 3
        finally:
            held.release_all()


def test_an_asked_port_in_use_is_named_and_nothing_stays_held() -> None:
    (free,) = pick_free_ports(1)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        asked = [
            AskedPort("API", "127.0.0.1", free, "--port"),
            AskedPort("Flower", "127.0.0.1", taken, "--flower-port"),
        ]
        with pytest.raises(
            LaunchError, match=rf"Flower port 127.0.0.1:{taken} is in use.*--flower-port"
        ):
            reserve(asked)
    again = reserve([AskedPort("API", "127.0.0.1", free, "--port")])  # was released
    again.release_all()
    with pytest.raises(LaunchError, match="asked for twice"):
        reserve([AskedPort("API", "127.0.0.1", free, "--port")] * 2)


# -- the package boundaries --------------------------------------------------------------------

ENGINE_MUST_NOT_IMPORT = {
    "fastapi",
    "starlette",
    "uvicorn",
    "celery",
    "kombu",
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "store",
    "api",
    "worker",
    "tasks",
    "service",
    "cli",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_the_engine_imports_no_framework_and_no_app_package() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & ENGINE_MUST_NOT_IMPORT)
        for path in sorted((ROOT / "contextq").rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_console_script_points_at_the_cli_package() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, func = scripts["contextq"].partition(":")
    assert (module, func) == ("cli.main", "main")
    assert callable(getattr(importlib.import_module(module), func))
    assert not (ROOT / "contextq" / "cli.py").exists()
    assert not (ROOT / "contextq" / "launcher.py").exists()


def test_launcher_modules_stay_small() -> None:
    for path in sorted((ROOT / "cli").rglob("*.py")):
        assert len(path.read_text().splitlines()) <= 400, path


def test_api_argv_runs_several_api_processes_when_asked() -> None:
    from cli.launcher.argv import api_argv

    several = api_argv("127.0.0.1", 8000, workers=3)
    assert several[several.index("--workers") + 1] == "3"
    assert "--workers" not in api_argv("127.0.0.1", 8000, workers=1)


def test_every_python_part_runs_in_safe_path_mode_on_contextqs_code(tmp_path: Path) -> None:
    """The working directory never joins sys.path
    (docs/operations.md#how-contextq-up-runs-the-stack; the real check, with decoy packages, is
    tests/test_cli_up_in_a_project.py)."""
    from cli.launcher.argv import CODE_ROOT, api_argv, beat_argv, flower_argv, worker_argv

    parts = {
        "api": api_argv("127.0.0.1", 8000, workers=2),
        "worker": worker_argv(1),
        "beat": beat_argv(tmp_path / "schedule", tmp_path / "pid", quiet=True),
        "flower": flower_argv("127.0.0.1", 5555),
    }
    for name, argv in parts.items():
        assert argv[:3] == [sys.executable, "-P", "-m"], name
    assert parts["api"][3:5] == ["uvicorn", "api.asgi:app"]
    app_dir = Path(parts["api"][parts["api"].index("--app-dir") + 1])
    assert app_dir == CODE_ROOT and (app_dir / "api" / "asgi.py").is_file()
    for name in ("worker", "beat", "flower"):  # worker/__main__.py: our app before Celery's
        assert parts[name][3:6] == ["worker", "-A", "worker.app"], name
