"""`contextq projects create|ls|search` (docs/cli.md) as real subprocesses against the API under
uvicorn, with a real worker indexing what `contextq upload --project-id` sends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.project_files import FACT, FACT_PAGE, FACT_QUESTION, pdf_bytes

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _cli(stack, api_server, owner, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args, "--api", api_server.base_url, "--key", owner.key],
        cwd=ROOT,
        env=stack.subprocess_env({"COLUMNS": "220"}),  # rich tables on one line per row
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_projects_create_ls_search(stack, worker, api_server, owner, tmp_path: Path) -> None:
    created = _cli(stack, api_server, owner, "projects", "create", "Plant manuals",
                   "--instructions", "Cite pages.")  # fmt: skip
    assert created.returncode == 0, created.stderr
    project_id = created.stdout.strip()
    assert len(project_id) == 32 and "--project-id " + project_id in created.stderr

    manual = tmp_path / "manual.pdf"
    manual.write_bytes(pdf_bytes(45))
    up = _cli(stack, api_server, owner, "upload", str(manual), "--project-id", project_id)
    assert up.returncode == 0, (up.stdout, up.stderr[-2000:])

    listed = _cli(stack, api_server, owner, "projects", "ls")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "Plant manuals" in line)
    assert project_id[:8] in row and "│ 1 " in row  # one file, ready
    raw = json.loads(_cli(stack, api_server, owner, "projects", "ls", "--json").stdout)
    assert [(p["id"], p["file_count"], p["ready_count"]) for p in raw] == [(project_id, 1, 1)]
    assert raw[0]["chunk_count"] >= 45

    found = _cli(stack, api_server, owner, "projects", "search", project_id, FACT_QUESTION,
                 "--limit", "3")  # fmt: skip
    assert found.returncode == 0, found.stderr
    first = next(line for line in found.stdout.splitlines() if line.startswith("│ 1 "))
    assert "manual.pdf" in first and f"page {FACT_PAGE}" in first
    hits = json.loads(
        _cli(
            stack, api_server, owner, "projects", "search", project_id, FACT_QUESTION, "--json"
        ).stdout
    )
    assert hits[0]["chunk"]["page"] == FACT_PAGE and FACT in hits[0]["text"]
    for mode in ("bm25", "dense"):  # each ranking alone, for comparison
        alone = _cli(stack, api_server, owner, "projects", "search", project_id, FACT_QUESTION,
                     "--json", "--mode", mode)  # fmt: skip
        assert alone.returncode == 0, alone.stderr
        assert json.loads(alone.stdout)[0]["chunk"]["page"] == FACT_PAGE, mode
    scores = {}
    for mode in ("bm25", "hybrid"):
        out = _cli(stack, api_server, owner, "projects", "search", project_id, FACT_QUESTION,
                   "--json", "--mode", mode).stdout  # fmt: skip
        scores[mode] = json.loads(out)[0]["score"]
    # a fused rank score (at most 2 / (RRF_K + 1): first in both rankings), not bm25's
    assert scores["hybrid"] <= 2 / 11 + 1e-9 < scores["bm25"]
    wrong = _cli(stack, api_server, owner, "projects", "search", project_id, "x", "--mode", "x")
    assert wrong.returncode == 2 and "hybrid" in wrong.stderr

    missing = _cli(stack, api_server, owner, "projects", "search", "0" * 32, "torque")
    assert (
        missing.returncode == 1
        and "404" in missing.stderr
        and "project not found" in (missing.stderr)
    )
    bad = _cli(stack, api_server, owner, "projects", "create", "")
    assert bad.returncode == 1 and "422" in bad.stderr
