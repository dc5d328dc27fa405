"""Clearing old tool results and large-result stand-ins
(docs/context.md#clearing-old-tool-results-with-hysteresis), engine side: the line where it moves
clears all but the newest `keep` results, protected and pinned ones stay, stubs and stand-ins name
the workspace path and the size. (The line's hysteresis over consecutive answers:
test_clearing_line.py.)"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contextq.assembly.tool_results import (
    ToolResultView,
    keep_line,
    result_path,
    stand_in,
    stub,
    to_clear,
)
from contextq.history import Message

RESULT = "status=ok " * 40


def _session(turns: int) -> list[Message]:
    out: list[Message] = []
    for n in range(turns):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        base = len(out)
        out += [
            Message("user", f"U{n}", id=f"u{n}", seq=base + 1),
            Message("assistant", None, id=f"a{n}", seq=base + 2, tool_calls=[call]),
            Message("tool", RESULT, id=f"t{n}", seq=base + 3, tool_call_id=f"c{n}"),
            Message("assistant", f"A{n}", id=f"r{n}", seq=base + 4),
        ]
    return out


def _cleared(history: list[Message], keep: int) -> set[str]:
    line = keep_line(history, keep)
    if line is None:
        return set()
    return {str(history[i].id) for i in to_clear(history, line=line, protected=())}


@given(st.integers(1, 120), st.integers(0, 8))
def test_the_keep_line_clears_all_but_the_newest_keep(turns: int, keep: int) -> None:
    history = _session(turns)
    cleared = _cleared(history, keep)
    results = [m for m in history if m.role == "tool"]
    assert cleared == {str(m.id) for m in results[: max(0, len(results) - keep)]}


def test_protected_pinned_and_short_results_stay() -> None:
    history = _session(30)
    history[2] = Message("tool", RESULT, id="t0", seq=3, tool_call_id="c0", pinned=True)
    history[6] = Message("tool", "short", id="t1", seq=7, tool_call_id="c1")
    line = keep_line(history, 5)
    assert line is not None
    got = to_clear(history, line=line, protected={10})
    assert {2, 6, 10}.isdisjoint(got) and 14 in got


def test_stub_and_stand_in_name_the_path_and_the_size() -> None:
    message = Message("tool", '{"a": [1, 2, 3]}', id="m1", seq=3, tool_call_id="c", token_count=9)
    assert result_path(message) == "tool-results/m1.json"
    cleared = stub(message, tokens=9, size_bytes=16, path=result_path(message))
    assert cleared.content == (
        "[Old tool result cleared (9 tokens); full result at /workspace/tool-results/m1.json]"
    )
    assert (cleared.id, cleared.tool_call_id, cleared.token_count) == ("m1", "c", None)
    shown = stand_in(message, ToolResultView("tool-results/m1.json", 16, "| a |\n|---|\n"))
    assert isinstance(shown.content, str) and shown.content.startswith("| a |")
    assert shown.content.endswith(
        "[This is a preview of a large tool result (9 tokens, 16 bytes). "
        "The full result is at /workspace/tool-results/m1.json.]"
    )
