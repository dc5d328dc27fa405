"""Recorded agent sessions through the same invariants (tests/data/trajectories/).

`convert` turns a SWE-agent trajectory (`.traj`: a JSON object whose `history` is the
message list the agent sent its model) into the small JSON this module loads:

- the `system` message becomes the conversation's system prompt;
- demonstrations (`is_demo`) are left out; the first user message is the task, pinned;
- function-calling sessions keep their `tool_calls` and `tool` results as they are;
- the others (thought + one shell command per turn, the observation as the next user
  message) become the same shape: the command as a `bash` tool call, the observation
  as its result;
- every text is cut to `max_chars` (a note says how much was cut) to keep the data
  small.

    .venv/bin/python -m tests.engine.assembly.harness.trajectories convert \\
        --out tests/data/trajectories SRC.traj…

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


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or () if isinstance(p, dict))


def convert(traj: dict[str, Any], *, source: str, max_chars: int = 8_000) -> dict[str, Any]:
    """A SWE-agent trajectory as {"source", "system", "messages"} (OpenAI shapes)."""
    history = [m for m in traj.get("history", []) if not m.get("is_demo")]
    system = next((_text(m["content"]) for m in history if m.get("role") == "system"), "")
    out: list[dict[str, Any]] = []
    pending: str | None = None  # the call id an observation answers (shell-style sessions)
    for n, m in enumerate(m for m in history if m.get("role") != "system"):
        text = _cut(_text(m.get("content")), max_chars)
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": c["function"].get("arguments", "{}"),
                    },
                }
                for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": text or None, "tool_calls": calls})
        elif role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            out.append({"role": "tool", "tool_call_id": ids[0], "content": text})
        elif role == "assistant" and m.get("action") and out:
            pending = f"call_{n}"
            arguments = json.dumps({"command": _cut(str(m["action"]), 2_000)})
            thought = _cut(str(m.get("thought") or ""), max_chars) or None
            out.append(
                {
                    "role": "assistant",
                    "content": thought,
                    "tool_calls": [
                        {
                            "id": pending,
                            "type": "function",
                            "function": {"name": "bash", "arguments": arguments},
                        }
                    ],
                }
            )
        elif role == "user" and pending is not None:
            out.append({"role": "tool", "tool_call_id": pending, "content": text})
            pending = None
        else:
            out.append({"role": role, "content": text})
    if out and out[0]["role"] == "user":
        out[0]["pinned"] = True  # the agent's task
    while out and out[-1].get("tool_calls"):
        out.pop()  # a session that ends on a call (`submit`) was never answered
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
    """Every session at every window in both formats: the invariants each one breaks."""
    from tests.engine.assembly.harness.run import check_case

    broken = 0
    for path in sessions():
        for window in WINDOWS:
            for fmt in ("openai", "anthropic"):
                names = sorted(
                    {v.invariant for v in check_case(load_case(path, window=window, fmt=fmt))}
                )
                broken += bool(names)
                print(f"{path.stem:<40} {window:>7} {fmt:<9} {', '.join(names) or 'holds'}")
    return 1 if broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="convert SWE-agent trajectories; check them")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("convert")
    c.add_argument("sources", nargs="+", type=Path)
    c.add_argument("--out", type=Path, default=DATA)
    c.add_argument("--max-chars", type=int, default=8_000)
    sub.add_parser("check")
    args = parser.parse_args(argv)
    if args.command == "check":
        return check()
    args.out.mkdir(parents=True, exist_ok=True)
    for source in args.sources:
        traj = json.loads(source.read_text(encoding="utf-8"))
        converted = convert(traj, source=source.as_posix(), max_chars=args.max_chars)
        target = args.out / (source.stem + ".json")
        target.write_text(json.dumps(converted, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"{target}: {len(converted['messages'])} messages, {target.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
