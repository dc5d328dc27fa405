"""README.md: the two commands first, CI runs the same test command, every setting documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from contextq.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _first_commands() -> list[str]:
    lines = README.splitlines()
    assert lines[0].startswith("```"), "README must open with the two commands"
    end = lines.index("```", 1)
    return lines[1:end]


def test_readme_opens_with_the_two_commands() -> None:
    run, test = _first_commands()
    # the thin client (clients/python) is a distribution of its own the server depends on
    assert run.startswith(
        "python3 -m venv .venv && .venv/bin/pip install -e . -e ./clients/python && "
    )
    assert run.endswith(".venv/bin/contextq up")
    assert test.startswith(
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' -e ./clients/python && "
    )


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    _, test = _first_commands()
    assert test in ci.splitlines(), ".ci/run must run the README's test command verbatim"
    assert ci.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in ci
    for script in (ROOT / ".ci" / "run", ROOT / "scripts" / "test"):
        assert os.access(script, os.X_OK), f"{script} must be executable"
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], check=False).returncode == 0


def test_every_setting_is_in_the_configuration_table() -> None:
    table = README.split("<!-- settings:start -->", 1)[1].split("<!-- settings:end -->", 1)[0]
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", table, re.M))
    missing = set(Settings.model_fields) - documented
    assert not missing, f"run `.venv/bin/python scripts/settings_table.py --write`: {missing}"
    stale = documented - set(Settings.model_fields)
    assert not stale, f"README documents settings that no longer exist: {stale}"


def test_readme_names_every_cli_command() -> None:
    for command in (
        "up",
        "upload",
        "context",
        "keys create",
        "migrate",
        "api",
        "worker",
        "beat",
        "flower",
        "health",
    ):
        assert f"`contextq {command}" in README, command


def test_bench_script_starts() -> None:
    # run as a script, bench/ comes first on sys.path: nothing there may shadow the stdlib
    # (a bench/queue.py once shadowed `queue`, which celery, kombu and concurrent.futures use)
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "upload_queue.py"), "--help"],
        capture_output=True,
        timeout=120,
        check=False,
        cwd=ROOT / "bench",
    )
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert b"--no-upload" in out.stdout
