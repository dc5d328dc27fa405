"""Tests that need a system package (Debian's chromium, PostgreSQL's server binaries):
outside CI a missing one skips the test with the command that installs it, so the
README's test command passes on a fresh machine; under `CI=true` it fails, so CI
still proves those tests (`.ci/run` installs the packages first)."""

from __future__ import annotations

import os

import pytest

TRUE = ("1", "true", "yes")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in TRUE


def require(present: bool, *, what: str, install: str) -> None:
    """Return when the package is there; else skip (outside CI) or fail (CI=true), the
    reason naming `install`."""
    if present:
        return
    reason = f"{what} is missing; install it with: {install}"
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a test's system package must be there)", pytrace=False)
    pytest.skip(reason)
