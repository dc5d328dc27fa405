"""A tool-heavy gpt-4 conversation whose context shows cleared stubs
(docs/context.md#clearing-old-tool-results-with-hysteresis), for the tests that follow a stub
through the SDK, the integrations and MCP."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contextq_client import Client

STUB = "[Old tool result cleared ("
STUB_PATH = re.compile(r"/workspace/tool-results/([\w-]+)\.\w+")
TURNS = 20  # gpt-4's 8K window clears the oldest results well before this
KEEP = 2  # keep_tool_results: the newest two whole, the older ones cleared as usage grows


def report(n: int) -> str:
    return f"health report {n}: " + " ".join(
        f"row{n}-{k} status=ok latency={k * 7 % 300}ms" for k in range(60)
    )


def _turn(n: int) -> list[dict[str, Any]]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "health", "arguments": "{}"}}
    return [
        {"role": "user", "content": f"U{n} check the service health"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": report(n)},
        {"role": "assistant", "content": f"A{n} all checks passed."},
    ]


@dataclass
class ToolHeavy:
    conversation_id: str
    originals: dict[str, str]  # tool message id -> its text
    stub_paths: list[str]  # the /workspace/… paths the context's stubs name, oldest first


def tool_heavy(client: Client, project_id: str | None = None) -> ToolHeavy:
    """The conversation, once every cleared result is readable in the workspace."""
    conv = client.conversations.create(
        model="gpt-4",
        title="tool-heavy",
        context_options={"keep_tool_results": KEEP},
        project_id=project_id,
    )
    originals: dict[str, str] = {}
    paths: list[str] = []
    for n in range(1, TURNS + 1):  # turn by turn, read after each, as an agent goes
        stored = client.messages.append(conv.id, _turn(n))
        originals |= {m.id: str(m.content) for m in stored.data if m.role == "tool"}
        context = client.context.get(conv.id)
        texts = [str(m.get("content")) for m in context.messages if m["role"] == "tool"]
        paths = [f.group(0) for t in texts if t.startswith(STUB) and (f := STUB_PATH.search(t))]
        if len(paths) >= 2:
            break
    assert len(paths) >= 2, "gpt-4's window clears the oldest tool results"
    # every path a stub names is in the workspace as the answer returns
    # (docs/context.md#clearing-old-tool-results-with-hysteresis)
    listed = {e.path for e in client.workspace.iter(conv.id, prefix="tool-results/")}
    assert all(p.removeprefix("/workspace/") in listed for p in paths), (paths, listed)
    return ToolHeavy(conv.id, originals, paths)


def original_of(heavy: ToolHeavy, path: str) -> str:
    found = STUB_PATH.search(path)
    assert found is not None, path
    return heavy.originals[found.group(1)]
