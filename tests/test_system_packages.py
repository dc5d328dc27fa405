"""Tests that need a system package skip outside CI with the command that installs it,
and fail under CI=true (tests/support/system_packages.py): the README's test command
passes on a fresh machine, CI still proves those tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import postgres as pg
from tests.support.system_packages import require

ROOT = Path(__file__).resolve().parent


def test_a_missing_package_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    require(True, what="gizmo", install="apt-get install -y gizmo")  # present: nothing
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y gizmo"):
        require(False, what="gizmo", install="apt-get install -y gizmo")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        require(False, what="gizmo", install="apt-get install -y gizmo")


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_a_missing_package_fails_under_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y gizmo"):
        require(False, what="gizmo", install="apt-get install -y gizmo")


def test_no_postgresql_names_its_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("POSTGRES_TEST_URL", raising=False)
    monkeypatch.setattr(pg, "find_bin_dir", lambda: None)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y postgresql"):
        pg.require_available()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y postgresql"):
        pg.require_available()


def test_the_inspector_test_skips_without_chromium() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["CONTEXTQ_CHROMIUM"] = str(ROOT / "no-such-chromium")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/integration/test_inspector.py", "-q", "-rs"],
        env=env,
        cwd=ROOT.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "1 skipped" in done.stdout
    assert "install it with: apt-get install -y chromium" in done.stdout
