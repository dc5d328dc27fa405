"""The CLI's client helpers without a server: target resolution, the context report and
the upload table."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cli.client import (
    ClientError,
    Target,
    context_report,
    display_names,
    files_table,
    resolve_target,
)
from contextq.secret_files import read_secret, secret_once, write_secret
from contextq.settings import Settings

ANSWER = {
    "conversation_id": "c1",
    "model": "gpt-4o",
    "format": "openai",
    "context_limit": 128000,
    "budget_tokens": 98000,
    "token_count": 41230,
    "strategy": "token_budget",
    "filtered": True,
    "removed_message_ids": ["m1", "m2", "m3"],
    "usage_before": 0.5,
    "usage_after": 0.25,
    "duration_ms": 3.1,
    "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}],
}


def test_report_uses_the_counts_the_api_gives() -> None:
    rows = dict(context_report({**ANSWER, "original_message_count": 50, "kept_message_count": 47}))
    assert rows["messages"] == "50 → 47"
    assert rows["removed ids"] == "m1, m2, m3"
    assert rows["tokens"] == "64000 → 41230"  # usage_before * context_limit
    assert rows["usage"] == "50.0% → 25.0%"
    assert rows["duration"] == "3.1 ms"


def test_report_derives_counts_without_them() -> None:
    rows = dict(context_report(ANSWER))
    # one synthetic system prompt + one history message sent, three removed
    assert rows["messages"] == "4 → 1"
    anthropic = dict(
        context_report(
            {**ANSWER, "format": "anthropic", "messages": [{"role": "user", "content": "hi"}]}
        )
    )
    assert anthropic["messages"] == "4 → 1"


def test_target_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONTEXTQ_API_URL", raising=False)
    monkeypatch.delenv("CONTEXTQ_API_KEY", raising=False)
    settings = Settings(DATA_DIR=tmp_path)
    with pytest.raises(ClientError, match="no API key"):
        resolve_target(None, None, settings)
    write_secret(tmp_path / "dev-api-key", "cq_saved")
    assert resolve_target(None, None, settings).key == "cq_saved"
    assert resolve_target(None, None, settings).api == "http://127.0.0.1:8000"
    monkeypatch.setenv("CONTEXTQ_API_KEY", "cq_env")
    monkeypatch.setenv("CONTEXTQ_API_URL", "http://h:1/")
    assert resolve_target(None, None, settings) == resolve_target(None, None, settings)
    assert resolve_target(None, None, settings).key == "cq_env"
    assert resolve_target(None, None, settings).api == "http://h:1"
    assert resolve_target("http://x:2", "cq_flag", settings).key == "cq_flag"


def test_the_url_up_saved_is_used_when_none_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONTEXTQ_API_URL", raising=False)
    monkeypatch.delenv("CONTEXTQ_API_KEY", raising=False)
    settings = Settings(DATA_DIR=tmp_path)
    write_secret(tmp_path / "dev-api-key", "cq_saved")
    write_secret(tmp_path / "api-url", "http://127.0.0.1:8711")  # `contextq up --port 8711`
    assert resolve_target(None, None, settings) == Target("http://127.0.0.1:8711", "cq_saved")
    monkeypatch.setenv("CONTEXTQ_API_URL", "http://h:1")
    assert resolve_target(None, None, settings).api == "http://h:1"
    assert resolve_target("http://x:2", None, settings).api == "http://x:2"


def test_secrets_are_0600_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "s"
    first = secret_once(path)
    assert secret_once(path) == first
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)
    assert read_secret(path) == first
    assert path.stat().st_mode & 0o777 == 0o600, "a loosened secret file is tightened again"
    assert ":" not in first and "," not in first  # Flower splits basic-auth on both


def _upload_rows(tmp_path: Path) -> tuple[list[Path], dict[Path, dict[str, Any]]]:
    deep = tmp_path / "projects" / "2026" / "quarterly-reports" / "very-long-directory-name"
    paths = [
        deep / "q3-revenue-by-region-and-product-line.xlsx",
        tmp_path / "a" / "notes.txt",
        tmp_path / "b" / "notes.txt",
        tmp_path / "broken.pdf",
    ]
    rows: dict[Path, dict[str, Any]] = {
        paths[0]: {
            "status": "ready",
            "category": "tabular",
            "token_count": 1_234_567,
            "processed_token_count": 2_048,
            "truncation": {
                "truncated": True,
                "summary": "showing the first 25 and last 25 of 48,112 rows of sheet Revenue",
            },
        },
        paths[1]: {"status": "ready", "category": "text", "token_count": 812},
        paths[2]: {"status": "processing", "category": None},
        paths[3]: {
            "status": "failed",
            "category": "document",
            "error": "this PDF cannot be read: it is encrypted and no password was given; "
            "upload a decrypted copy",
        },
    }
    return paths, rows


def test_the_upload_table_names_files_and_fits_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    paths, rows = _upload_rows(tmp_path)
    console = Console(file=io.StringIO(), record=True)  # width from COLUMNS, as a terminal's
    assert console.width == 80
    console.print(files_table(paths, rows))
    text = console.export_text()
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, text
    assert str(tmp_path) not in text and "quarterly-reports" not in text, text
    assert "a/notes.txt" in text and "b/notes.txt" in text  # same name: the parent tells
    assert "1,234,567 → 2,048" in text
    assert "broken.pdf" in text and "encrypted" in text
    notes = " ".join(line.split("│")[-2].strip() for line in lines if line.count("│") == 6)
    assert "showing the first 25 and last 25 of 48,112 rows of sheet Revenue" in notes
    row = next(line for line in lines if "broken.pdf" in line)
    assert "failed" in row and "document" in row


def test_display_names_are_the_shortest_that_tell_files_apart() -> None:
    paths = [Path("/x/a/n.txt"), Path("/y/a/n.txt"), Path("/z/m.txt"), Path("n.txt")]
    assert display_names(paths) == ["x/a/n.txt", "y/a/n.txt", "m.txt", "n.txt"]
