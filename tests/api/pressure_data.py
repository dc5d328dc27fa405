"""Builders for the context-under-pressure tests (issue 17): texts of an exact token
count, an agent's tool run, ready files, and the checks every such answer passes."""

from __future__ import annotations

import random
import re
from typing import Any

from contextq.tokens import count_tokens
from tests.api.test_context_assembly import context, conversation, post

PATH = re.compile(r"/workspace/(tool-results/[\w-]+\.\w+)")
WORDS = [
    "the",
    "queue",
    "worker",
    "parses",
    "config",
    "files",
    "and",
    "retries",
    "failed",
    "uploads",
    "before",
    "timeout",
]


def text_of(tokens: int, *, seed: int, prefix: str = "") -> str:
    """A text of exactly `tokens` cl100k tokens (gpt-4's encoding), starting `prefix`, in
    lines of 16 words (the file processors keep lines whole up to MAX_LINE_LENGTH)."""
    rng = random.Random(seed)
    words = [rng.choice(WORDS) for _ in range(tokens + 16)]

    def text(n: int) -> str:
        return prefix + "".join(
            ("\n" if k % 16 == 15 else " ") + word for k, word in enumerate(words[:n])
        )

    low, high = 0, len(words)  # the most words within `tokens`
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if count_tokens(text(mid)) <= tokens else (low, mid - 1)
    out = text(low)
    while count_tokens(out) < tokens:
        out += "."
    assert count_tokens(out) == tokens
    return out


def call(call_id: str, name: str = "bash") -> dict[str, Any]:
    function = {"name": name, "arguments": '{"cmd": "make test"}'}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def tool_run(pairs: int, *, result_tokens: int, seed: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(pairs):
        out += [call(f"c{seed}_{i}"), result(f"c{seed}_{i}", text_of(result_tokens, seed=i))]
    return out


def ready_file(client: Any, name: str, text: str) -> str:
    """A markdown file uploaded and processed by the worker's own function."""
    from contextq.settings import get_settings
    from service.files.processing import process_file
    from tests.support.files import upload

    file_id = str(upload(client, name, text.encode())["id"])
    assert process_file(settings=get_settings(), file_id=file_id).status == "ready"
    return file_id


def texts(answer: dict[str, Any]) -> list[str]:
    """Every text of an OpenAI-format answer, message by message."""
    out = []
    for m in answer["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            out.append("\n".join(p.get("text", "") for p in content))
        else:
            out.append(content or "")
    return out


def readable_paths(client: Any, cid: str, text: str) -> list[str]:
    """The workspace paths `text` names; each must answer 200 now."""
    found = PATH.findall(text)
    for path in found:
        r = client.get(f"/v1/conversations/{cid}/workspace/{path}")
        assert r.status_code == 200, (path, r.status_code, r.text[:200])
    return found


__all__ = ["context", "conversation", "post"]
