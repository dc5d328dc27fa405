"""The CLI's client helpers without a server: target resolution and the context report."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.client import ClientError, context_report, resolve_target
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


def test_secrets_are_0600_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "s"
    first = secret_once(path)
    assert secret_once(path) == first
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)
    assert read_secret(path) == first
    assert path.stat().st_mode & 0o777 == 0o600, "a loosened secret file is tightened again"
    assert ":" not in first and "," not in first  # Flower splits basic-auth on both
