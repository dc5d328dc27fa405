"""Recorded agent sessions through the same invariants (tests/data/trajectories/).

The sessions are the Berkeley Function Calling Leaderboard's multi-turn tasks (BFCL v4,
`multi_turn_long_context`, Apache-2.0, shipped in the `bfcl-eval` package on PyPI),
rebuilt by `bench/public_sessions.py`: every user turn of a run of tasks over one set of
simulated APIs (file system, trading, travel, tickets, messaging, social, vehicle), and
for each ground-truth call an assistant tool call and its result as BFCL's own API class
returns it. `convert` writes a few of them as the small JSON this module loads:

- the system message becomes the conversation's system prompt;
- the first user message (the agent's first task) is pinned, and the one user turn
  the bench pins;
- every text is cut to `max_chars` (a note says how much was cut) to keep the data
  small.

    .venv/bin/pip install --no-deps bfcl-eval==2026.3.23
    .venv/bin/python -m tests.engine.assembly.harness.trajectories convert

`load_case` reads one converted session as a harness case for a model and window: the
history read at three points (two thirds, five sixths, all of it), so the cut point,
the clearing and the prefix are carried from read to read as the service does.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from contextq.assembly import Prompts
from contextq.history import Message
from contextq.history.types import FORMAT_NAMES
from tests.engine.assembly.harness.cases import Case
from tests.engine.assembly.harness.text import marker

DATA = Path(
    os.environ.get("CONTEXTQ_TRAJECTORIES")
    or Path(__file__).resolve().parents[3] / "data" / "trajectories"
)
WINDOWS = (4096, 8192, 32768, 128000, 200000)
MODEL = "gpt-4.1"  # a 1M window: each MAX_CONTEXT_TOKENS cap above takes effect


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n[… {len(text) - max_chars} characters cut in conversion …]"


def convert(session: Any, *, source: str, max_chars: int = 8_000) -> dict[str, Any]:
    """A rebuilt session (`bench.agent_sessions.Session`) as {"source", "system",
    "messages"} in OpenAI shapes, its first user message pinned."""
    system = next((m.text() for m in session.messages if m.role == "system"), "")
    out: list[dict[str, Any]] = []
    for m in session.messages:
        if m.role == "system":
            continue
        item: dict[str, Any] = {"role": m.role, "content": None}
        if m.content is not None:
            item["content"] = _cut(m.text(), max_chars)
        if m.tool_calls:
            item["tool_calls"] = m.tool_calls
        if m.tool_call_id:
            item["tool_call_id"] = m.tool_call_id
        if m.pinned or (m.role == "user" and not any(x["role"] == "user" for x in out)):
            item["pinned"] = True
        out.append(item)
    return {"source": source, "system": system, "messages": out}


def sessions() -> list[Path]:
    return sorted(DATA.glob("*.json"))


def _messages(data: dict[str, Any]) -> list[Message]:
    out = []
    for seq, m in enumerate(data["messages"], 1):
        text = m.get("content")
        out.append(
            Message(
                role=m["role"],
                content=None if text is None else marker(seq) + text,
                seq=seq,
                id=f"m{seq}",
                tool_calls=m.get("tool_calls"),
                tool_call_id=m.get("tool_call_id"),
                pinned=bool(m.get("pinned")),
            )
        )
    return out


def _split(messages: list[Message], at: float) -> int:
    """An index near `at` of the way that starts a new unit (never inside a tool chain)."""
    i = max(1, int(len(messages) * at))
    while i < len(messages) and messages[i].role == "tool":
        i += 1
    return i


def load_case(path: Path, *, window: int, fmt: str) -> Case:
    data = json.loads(path.read_text(encoding="utf-8"))
    messages = _messages(data)
    a, b = _split(messages, 2 / 3), _split(messages, 5 / 6)
    reads = [messages[:a], messages[a:b], messages[b:]]
    return Case(
        seed=-1,
        model=MODEL,
        window=window,
        format=fmt,
        strategy=None,
        options={},
        prompts=Prompts(system_prompt=data.get("system") or None),
        reads=[r for r in reads if r],
    )


def check() -> int:
    """Every session at every window in every format: the invariants each one breaks."""
    from tests.engine.assembly.harness.run import check_case

    broken = 0
    for path in sessions():
        for window in WINDOWS:
            for fmt in FORMAT_NAMES:
                names = sorted(
                    {v.invariant for v in check_case(load_case(path, window=window, fmt=fmt))}
                )
                broken += bool(names)
                print(f"{path.stem:<40} {window:>7} {fmt:<9} {', '.join(names) or 'holds'}")
    return 1 if broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="convert BFCL sessions; check them")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("convert")
    c.add_argument("--out", type=Path, default=DATA)
    c.add_argument("--count", type=int, default=5)
    c.add_argument("--turns", type=int, default=120, help="messages per session, at least")
    c.add_argument("--max-chars", type=int, default=8_000)
    sub.add_parser("check")
    args = parser.parse_args(argv)
    if args.command == "check":
        return check()
    from bench.public_sessions import DATA as BFCL_DATA
    from bench.public_sessions import VERSION, load

    runs, note = load(args.count, turns=args.turns)
    if not runs:
        print(note)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for n, run in enumerate(runs, 1):
        name = f"bfcl-{n}-{run.domain.lower()}"
        source = f"bfcl-eval {VERSION}: {BFCL_DATA}, API set {run.domain}"
        converted = convert(run, source=source, max_chars=args.max_chars)
        target = args.out / f"{name}.json"
        target.write_text(json.dumps(converted, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"{target}: {len(converted['messages'])} messages, {target.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
