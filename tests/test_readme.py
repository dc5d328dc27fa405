"""README.md and docs/: the two commands first, CI runs the same test command, a short README
linking every docs page, links that resolve, every setting and CLI command documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contextq.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
# pages the README links before the branch that writes them is merged
PAGES_BEING_WRITTEN = {"docs/mcp.md"}


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
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    table = page.split("<!-- settings:start -->", 1)[1].split("<!-- settings:end -->", 1)[0]
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", table, re.M))
    missing = set(Settings.model_fields) - documented
    assert not missing, f"run `.venv/bin/python scripts/settings_table.py --write`: {missing}"
    stale = documented - set(Settings.model_fields)
    assert not stale, f"docs/configuration.md documents settings that no longer exist: {stale}"
    check = [sys.executable, str(ROOT / "scripts" / "settings_table.py"), "--check"]
    done = subprocess.run(check, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_docs_name_every_cli_command() -> None:
    cli = (DOCS / "cli.md").read_text(encoding="utf-8")
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
        assert f"`contextq {command}" in cli, command


def test_readme_is_short_and_links_every_docs_page() -> None:
    assert len(README.splitlines()) <= 200, "the README is what a newcomer reads first"
    linked = {target.split("#", 1)[0] for target in _links(README)}
    for page in DOCS.glob("*.md"):
        assert f"docs/{page.name}" in linked, f"README links no docs/{page.name}"


def _links(markdown: str) -> list[str]:
    """Relative link targets of a Markdown text, code spans and blocks left out."""
    prose = re.sub(r"```.*?```|`[^`\n]*`", "", markdown, flags=re.S)
    targets = re.findall(r"\]\(([^)\s]+)\)", prose)
    return [t for t in targets if not re.match(r"[a-z]+:", t)]


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    headings = re.findall(r"^#{1,6} (.+)$", prose, re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize(
    "source", ["README.md", *sorted(f"docs/{p.name}" for p in DOCS.glob("*.md"))]
)
def test_links_resolve(source: str) -> None:
    path = ROOT / source
    for target in _links(path.read_text(encoding="utf-8")):
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        name = linked.relative_to(ROOT).as_posix()
        if name in PAGES_BEING_WRITTEN and not linked.exists():
            continue
        assert linked.exists(), f"{source} links {target}: no such file"
        if anchor:
            ids = _anchors(linked.read_text(encoding="utf-8"))
            assert anchor in ids, f"{source} links {target}: no such heading"


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
