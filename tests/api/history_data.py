"""Synthetic agent histories with tool chains, and the invariants a context must keep.

Shared by tests/api/test_context*.py, tests/integration/test_history_*.py and
bench/history_http.py. Every message carries a unique marker `<#n>` in its text so a
sent message can be traced back to the stored one.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from typing import Any

MARK = re.compile(r"<#(\d+)>")
WORDS = [
    "parse",
    "config",
    "module",
    "request",
    "cache",
    "worker",
    "token",
    "budget",
    "index",
    "query",
    "table",
    "retry",
    "timeout",
    "schema",
    "upload",
    "summary",
    "commit",
    "branch",
    "deploy",
    "metric",
    "latency",
    "error",
    "handler",
]


def _text(rng: random.Random, n: int, marker: int) -> str:
    return f"<#{marker}> " + " ".join(rng.choice(WORDS) for _ in range(n))


def agent_history(
    n: int, *, seed: int = 7, pinned: int = 3, system_every: int = 0, words: int = 30
) -> list[dict[str, Any]]:
    """About `n` messages: user prompts, assistant turns with 1-3 tool calls each
    followed by their results, plain answers, decisions and errors. `pinned` messages
    (one of them a tool call whose results stay with it) are spread over the history."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [{"role": "system", "content": _text(rng, 10, 0)}]
    call = 0
    while len(out) < n:
        marker = len(out)
        if system_every and marker % system_every == 0:
            out.append({"role": "system", "content": _text(rng, 8, marker)})
            continue
        choice = rng.random()
        if choice < 0.25:
            out.append(
                {"role": "user", "content": _text(rng, words, marker), "kind": "user_prompt"}
            )
        elif choice < 0.7:
            calls = []
            for _ in range(rng.randint(1, 3)):
                call += 1
                calls.append(
                    {
                        "id": f"call_{call}",
                        "type": "function",
                        "function": {
                            "name": rng.choice(["read_file", "grep", "run_tests"]),
                            "arguments": json.dumps({"path": f"src/{rng.choice(WORDS)}.py"}),
                        },
                    }
                )
            out.append(
                {
                    "role": "assistant",
                    "content": _text(rng, 5, marker),
                    "tool_calls": calls,
                    "kind": "tool_call",
                }
            )
            for c in calls:
                failed = rng.random() < 0.1
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": c["id"],
                        "content": ("Error: " if failed else "") + _text(rng, words, len(out)),
                        "kind": "error" if failed else "observation",
                    }
                )
        elif choice < 0.8:
            out.append(
                {"role": "assistant", "content": _text(rng, words, marker), "kind": "decision"}
            )
        else:
            out.append(
                {"role": "assistant", "content": _text(rng, words, marker), "kind": "reasoning"}
            )
    out = out[:n]
    last_call = max((i for i, m in enumerate(out) if m.get("tool_calls")), default=None)
    if last_call is not None:  # never end inside a chain (a call without all its results)
        ids = {c["id"] for c in out[last_call]["tool_calls"]}
        if ids != {m.get("tool_call_id") for m in out[last_call + 1 :]}:
            del out[last_call:]
    _pin(out, pinned, rng)
    return out


def _pin(messages: list[dict[str, Any]], count: int, rng: random.Random) -> None:
    if count <= 0:
        return
    calls = [i for i, m in enumerate(messages[: len(messages) // 2]) if m.get("tool_calls")]
    plain = [i for i, m in enumerate(messages) if m["role"] == "user"]
    chosen = ([calls[len(calls) // 3]] if calls else []) + rng.sample(
        plain, min(count - 1, len(plain))
    )
    for i in chosen[:count]:
        messages[i]["pinned"] = True


def marker_of(message: dict[str, Any]) -> int | None:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    found = MARK.search(content or "")
    return int(found.group(1)) if found else None


def check_openai_invariants(
    sent: list[dict[str, Any]], original: list[dict[str, Any]], *, system_prompt: str | None
) -> None:
    """System kept, pinned kept, no orphan tool message, a subsequence of the input."""
    start = 0
    if system_prompt:  # the prompt, then its sections (the date, …)
        assert sent[0]["role"] == "system"
        assert sent[0]["content"].startswith(system_prompt)
        start = 1
    history = [m for m in sent[start:] if marker_of(m) is not None]
    markers = [marker_of(m) for m in history]
    assert markers == sorted(markers), "not a subsequence in order"
    assert len(set(markers)) == len(markers)
    for m in history:
        assert original[markers[history.index(m)]]["role"] == m["role"]
    for i, m in enumerate(original):  # stored system messages and pinned ones are sent
        if m["role"] == "system" or m.get("pinned"):
            assert i in markers, f"message #{i} ({m['role']}, pinned={m.get('pinned')}) dropped"
    open_calls: set[str] = set()
    answered: set[str] = set()
    for m in sent:
        if m["role"] == "assistant" and m.get("tool_calls"):
            open_calls |= {c["id"] for c in m["tool_calls"]}
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_calls, f"orphan tool result {m['tool_call_id']}"
            answered.add(m["tool_call_id"])
    assert open_calls == answered, f"calls without results: {open_calls - answered}"
    first_history = next((m for m in sent[start:] if m["role"] != "system"), None)
    assert first_history is None or first_history["role"] != "tool"


def validate_with_sdks(answer: dict[str, Any]) -> None:
    """The messages (and tools) pass the OpenAI (format=openai|responses), Anthropic or
    google-genai SDK's own types, in strict mode; Anthropic's `system` is a list of text
    blocks, the Responses API's `instructions` a string."""
    from pydantic import TypeAdapter

    if answer["format"] == "gemini":
        from google.genai import types

        assert "messages" not in answer and answer["contents"], "at least one content"
        assert answer["contents"][0]["role"] == "user"
        for content in [answer["system_instruction"], *answer["contents"]]:
            if content is not None:
                types.Content.model_validate(content)  # pydantic, unknown keys forbidden
        for tool in answer.get("tools") or ():
            types.Tool.model_validate(tool)
        return
    if answer["format"] == "responses":
        from openai.types.responses import FunctionToolParam, ResponseInputParam

        assert "messages" not in answer
        assert answer["instructions"] is None or isinstance(answer["instructions"], str)
        assert answer["input"], "at least one input item"
        TypeAdapter(ResponseInputParam).validate_python(answer["input"], strict=True)
        for tool in answer.get("tools") or ():
            if tool.get("type") == "function":
                TypeAdapter(FunctionToolParam).validate_python(tool, strict=True)
        return
    if answer["format"] == "openai":
        from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

        adapter = TypeAdapter(ChatCompletionMessageParam)
        for m in answer["messages"]:
            adapter.validate_python(m, strict=True)
        for tool in answer.get("tools") or ():
            TypeAdapter(ChatCompletionToolParam).validate_python(tool, strict=True)
    else:
        from anthropic.types import MessageParam, TextBlockParam, ToolParam

        adapter = TypeAdapter(MessageParam)
        system = answer["system"]
        assert system is None or isinstance(system, list)
        for block in system or ():
            TypeAdapter(TextBlockParam).validate_python(block, strict=True)
        roles = [m["role"] for m in answer["messages"]]
        assert roles[0] == "user"
        assert all(a != b for a, b in itertools.pairwise(roles)), "roles must alternate"
        for m in answer["messages"]:
            adapter.validate_python(m, strict=True)
        for tool in answer.get("tools") or ():
            TypeAdapter(ToolParam).validate_python(tool, strict=True)
