"""Small builders of message histories for the history-engine tests."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from contextq.history import Message, count_message_tokens

WORDS = (
    "agent",
    "reads",
    "file",
    "config",
    "parser",
    "error",
    "timeout",
    "decided",
    "retry",
    "database",
    "schema",
    "index",
    "query",
    "user",
    "wants",
    "report",
    "summary",
    "latency",
    "cache",
    "worker",
    "queue",
    "deploy",
    "migration",
    "test",
    "build",
)


def sentence(rng: random.Random, words: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def user(seq: int, text: str, **kw: object) -> Message:
    return Message(role="user", content=text, seq=seq, id=f"m{seq}", **kw)  # type: ignore[arg-type]


def assistant(seq: int, text: str, **kw: object) -> Message:
    return Message(role="assistant", content=text, seq=seq, id=f"m{seq}", **kw)  # type: ignore[arg-type]


def call(seq: int, *call_ids: str, name: str = "read_file", path: str = "a.py") -> Message:
    calls = [
        {
            "id": cid,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps({"path": path})},
        }
        for cid in call_ids
    ]
    return Message(role="assistant", tool_calls=calls, seq=seq, id=f"m{seq}", kind="tool_call")


def result(seq: int, call_id: str, text: str = "ok", **kw: object) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=text, seq=seq, id=f"m{seq}", **kw)  # type: ignore[arg-type]


def counted(messages: Sequence[Message], model: str = "gpt-4o") -> list[Message]:
    for m in messages:
        m.token_count = count_message_tokens(m, model)
    return list(messages)


def agent_history(turns: int, seed: int = 0, *, system: bool = True) -> list[Message]:
    """A realistic tool-calling run: user → (assistant tool_calls → tool results)* → assistant."""
    rng = random.Random(seed)
    out: list[Message] = []
    seq = 0
    if system:
        prompt = "You are a careful coding agent."
        out.append(Message(role="system", content=prompt, seq=seq, id="m0"))
    for _ in range(turns):
        seq += 1
        out.append(
            user(seq, " ".join(sentence(rng) for _ in range(rng.randint(1, 3))), kind="user_prompt")
        )
        for _ in range(rng.randint(0, 2)):
            seq += 1
            ids = [f"call_{seq}_{j}" for j in range(rng.randint(1, 3))]
            out.append(call(seq, *ids, path=f"src/f{rng.randint(1, 9)}.py"))
            for cid in ids:
                seq += 1
                failed = rng.random() < 0.1
                text = sentence(rng, 30)
                if failed:
                    text = f"Error: timeout after {rng.randint(1, 900)} ms"
                out.append(result(seq, cid, text, kind="error" if failed else "observation"))
        seq += 1
        out.append(assistant(seq, sentence(rng, 20), kind=rng.choice(["reasoning", "decision"])))
    return counted(out)
