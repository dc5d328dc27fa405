"""service.background_writer: work off the caller's thread, coalesced per key."""

from __future__ import annotations

import threading
from typing import Any

from service.background_writer import BackgroundWriter


def test_runs_off_the_callers_thread_and_coalesces_a_waiting_key() -> None:
    gate = threading.Event()
    done: list[tuple[Any, Any, str]] = []

    def work(key: Any, value: Any) -> None:
        gate.wait(5)
        done.append((key, value, threading.current_thread().name))

    writer = BackgroundWriter(work, name="test-writer")
    writer.submit("a", 1)  # taken at once; blocks on the gate
    assert not writer.flush(0.2)  # still running
    for value in range(2, 6):  # "a" waits again: these four coalesce into its last value
        writer.submit("a", value)
    writer.submit("b", 1)
    gate.set()
    assert writer.flush(5)
    assert [(k, v) for k, v, _ in done] == [("a", 1), ("a", 5), ("b", 1)]
    assert {name for _, _, name in done} == {"test-writer"}


def test_a_failing_work_item_is_logged_and_the_writer_goes_on(caplog: Any) -> None:
    seen: list[str] = []

    def work(key: str, _value: Any) -> None:
        if key == "bad":
            raise OSError("disk full")
        seen.append(key)

    writer = BackgroundWriter(work, name="test-writer-2")
    writer.submit("bad", None)
    writer.submit("good", None)
    assert writer.flush(5)
    assert seen == ["good"]
    assert "work on 'bad' failed" in caplog.text and "disk full" in caplog.text
