"""Recorded agent sessions (tests/data/trajectories/, see its README) through every
invariant, at 4K, 8K, 32K, 128K and 200K windows, in every format, each read at three
points of the session with the stored state carried between reads."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from contextq.history.types import FORMAT_NAMES
from tests.engine.assembly.harness.run import check_case
from tests.engine.assembly.harness.trajectories import DATA, WINDOWS, load_case, sessions

SESSIONS = sessions()


@pytest.mark.skipif(not SESSIONS, reason=f"no converted sessions in {DATA} (its README says how)")
@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_a_recorded_session_keeps_every_promise(path: Path, window: int, fmt: str) -> None:
    case = load_case(path, window=window, fmt=fmt)
    logging.disable(logging.WARNING)
    try:
        violations = check_case(case)
    finally:
        logging.disable(logging.NOTSET)
    lines = [f"{v.invariant} (read {v.read}): {p}" for v in violations for p in v.problems[:2]]
    assert not violations, f"{path.stem} at {window} tokens, {fmt}:\n" + "\n".join(lines)
