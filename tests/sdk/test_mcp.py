"""contextq as an MCP server (docs/mcp.md), driven by the `mcp` SDK's own client against a
real `contextq up`, over both transports: `contextq mcp --conversation ID` (stdio, a
subprocess talking to the API through the thin client) and the API's `/mcp` (streamable
HTTP; both the initialize handshake and the per-request protocol). List the tools, call
each, read a cleared tool result back whole; another key's conversation and hostile
paths give error results and no data."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from contextq.testing import RunningStack, code_root
from tests.sdk.tool_heavy import ToolHeavy, original_of, tool_heavy

pytestmark = pytest.mark.integration

TRANSPORTS = ["stdio", "http", "http-handshake"]
ALL_TOOLS = [
    "workspace_read",
    "workspace_list",
    "project_search",
    "memory_get",
    "memory_add_decision",
    "memory_record_error",
]
MANUAL = b"# Maintenance\n\nTighten the wheel bolts to a torque of 120 Nm.\n"


@dataclass
class World:
    stack: RunningStack
    heavy: ToolHeavy
    other_key: str  # another owner's key


def _contextq_command() -> list[str]:
    script = Path(sys.executable).parent / "contextq"  # the console script, as users run it
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]


def _env(stack: RunningStack, key: str) -> dict[str, str]:
    env = {**os.environ, "CONTEXTQ_API_URL": stack.base_url, "CONTEXTQ_API_KEY": key}
    env |= {"DATA_DIR": str(stack.data_dir), "PYTHONPATH": code_root()}
    return env


@pytest.fixture(scope="module")
def world(contextq_stack: RunningStack) -> World:
    client = contextq_stack.client
    project = client.projects.create("manual")
    client.files.upload(MANUAL, filename="maintenance.md", project_id=project.id, wait=True)
    deadline = time.monotonic() + 60  # indexed by the worker after processing
    while not client.projects.search(project.id, "torque").data:
        assert time.monotonic() < deadline, "the manual was never indexed"
        time.sleep(0.2)
    heavy = tool_heavy(client, project_id=project.id)
    made = subprocess.run(
        [*_contextq_command(), "keys", "create", "--owner", "mallory"],
        env=_env(contextq_stack, ""),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return World(contextq_stack, heavy, made.stdout.strip())


@asynccontextmanager
async def _session(
    world: World,
    transport: str,
    key: str,
    conversation_id: str | None,
    *,
    via: str = "header",  # or "query": /mcp?conversation=…, for URL-and-token clients
) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    if transport == "stdio":
        assert conversation_id is not None
        command, *args = _contextq_command()
        params = StdioServerParameters(
            command=command,
            args=[*args, "mcp", "--conversation", conversation_id],
            env=_env(world.stack, key),
        )
        async with Client(params) as client:
            yield client
        return
    headers = {"Authorization": f"Bearer {key}"}
    url = f"{world.stack.base_url}/mcp"
    if conversation_id is not None and via == "header":
        headers["X-Contextq-Conversation"] = conversation_id
    elif conversation_id is not None:
        url += f"?conversation={conversation_id}"
    mode = "legacy" if transport == "http-handshake" else "auto"
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def _text(result: Any) -> tuple[str, bool]:
    return "".join(c.text for c in result.content), bool(result.is_error)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_mcp_client_lists_and_calls_every_tool(world: World, transport: str) -> None:
    heavy = world.heavy
    stub = heavy.stub_paths[0]

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        key = world.stack.api_key
        async with _session(world, transport, key, heavy.conversation_id) as mcp:
            listed = await mcp.list_tools()
            out["tools"] = {t.name: t.input_schema for t in listed.tools}
            calls = {
                "read": ("workspace_read", {"path": stub}),
                "list": ("workspace_list", {"prefix": "tool-results/"}),
                "search": ("project_search", {"query": "bolt torque", "limit": 2}),
                "decide": ("memory_add_decision", {"decision": "ship on Friday"}),
                "error": ("memory_record_error", {"error": "timeout after 30 s"}),
                "memory": ("memory_get", {}),
                "escape": ("workspace_read", {"path": "../../../../etc/passwd"}),
                "absolute": ("workspace_read", {"path": "/etc/passwd", "offset": 0}),
                "bad": ("workspace_read", {"path": stub, "offset": -1}),
                "unknown": ("shell", {"command": "cat /etc/passwd"}),
            }
            for label, (name, arguments) in calls.items():
                out[label] = _text(await mcp.call_tool(name, arguments))
        return out

    out = anyio.run(scenario)
    assert list(out["tools"]) == ALL_TOOLS
    assert out["tools"]["workspace_read"]["required"] == ["path"]
    text, error = out["read"]
    assert not error and text.startswith(original_of(heavy, stub) + "\n\n[")
    assert not out["list"][1] and all(p in out["list"][0] for p in heavy.stub_paths)
    assert out["search"] == (out["search"][0], False)
    assert out["search"][0].startswith("[1] maintenance.md") and "120 Nm" in out["search"][0]
    assert re.fullmatch(r"Recorded the decision \(medium impact\); .*", out["decide"][0])
    assert "Recorded under the pattern" in out["error"][0]
    assert "ship on Friday" in out["memory"][0] and not out["memory"][1]
    for label in ("escape", "absolute", "bad", "unknown"):
        text, error = out[label]
        assert error and text.startswith("Error ("), (label, text)
        assert "root:" not in text, label
    assert "`..` is not allowed" in out["escape"][0]
    assert "offset" in out["bad"][0]


@pytest.mark.parametrize("transport", ["http", "http-handshake"])
def test_another_keys_conversation_gives_errors_and_no_data(world: World, transport: str) -> None:
    heavy = world.heavy
    stub = heavy.stub_paths[0]

    async def scenario() -> list[tuple[str, bool]]:
        async with _session(world, transport, world.other_key, heavy.conversation_id) as mcp:
            return [
                _text(await mcp.call_tool("workspace_read", {"path": stub})),
                _text(await mcp.call_tool("workspace_list", {})),
                _text(await mcp.call_tool("memory_get", {})),
                _text(await mcp.call_tool("memory_add_decision", {"decision": "take over"})),
            ]

    for text, error in anyio.run(scenario):
        assert error and text == "Error (404): conversation not found"
    memory = world.stack.client.memory.get(heavy.conversation_id)
    assert all(d.decision != "take over" for d in memory.decisions)


def test_stdio_refuses_another_keys_conversation_before_serving(world: World) -> None:
    done = subprocess.run(
        [*_contextq_command(), "mcp", "--conversation", world.heavy.conversation_id],
        env=_env(world.stack, world.other_key),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""  # stdout is the protocol's alone
    assert "conversation not found" in done.stderr


HTTP = ["http", "http-handshake"]
HOW_TO_NAME = (
    "connect to /mcp?conversation=<conversation id> (or send the header "
    "`X-Contextq-Conversation: <conversation id>`); the id is the one `POST /v1/conversations` "
    "answered, and the tools act on that conversation"
)


@pytest.mark.parametrize("transport", HTTP)
def test_the_conversation_can_be_named_in_the_url(world: World, transport: str) -> None:
    heavy = world.heavy
    stub = heavy.stub_paths[0]

    async def scenario() -> list[tuple[str, bool]]:
        key = world.stack.api_key
        async with _session(world, transport, key, heavy.conversation_id, via="query") as mcp:
            return [
                _text(await mcp.call_tool("workspace_read", {"path": stub})),
                _text(await mcp.call_tool("workspace_list", {"prefix": "tool-results/"})),
            ]

    (read, error), (listed, list_error) = anyio.run(scenario)
    assert not error and read.startswith(original_of(heavy, stub) + "\n\n[")
    assert not list_error and all(p in listed for p in heavy.stub_paths)


@pytest.mark.parametrize("transport", HTTP)
def test_without_a_conversation_initialize_succeeds_and_each_tool_says_how_to_name_one(
    world: World, transport: str
) -> None:
    async def scenario() -> tuple[str | None, list[str], list[tuple[str, bool]]]:
        async with _session(world, transport, world.stack.api_key, None) as mcp:
            listed = [t.name for t in (await mcp.list_tools()).tools]
            calls = [_text(await mcp.call_tool(name, {"path": "a.txt"})) for name in listed]
            return mcp.instructions, listed, calls

    instructions, listed, calls = anyio.run(scenario)
    assert listed == ALL_TOOLS
    expected = (
        f"Error: this MCP connection names no conversation, so no tool can run: {HOW_TO_NAME}"
    )
    assert calls == [(expected, True)] * len(ALL_TOOLS)
    if transport == "http-handshake":  # the initialize answer carries the server's instructions
        assert instructions is not None and instructions.startswith(
            "Note: this MCP connection names no conversation"
        )


def _tools_call(url: str, name: str, **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": name, "arguments": {}}  # type: ignore[assignment]
    accept = {"Accept": "application/json, text/event-stream"}
    return httpx.post(url, json=body, headers={**accept, **headers}, timeout=30)


def test_http_mcp_needs_the_key_and_refuses_two_different_conversations(world: World) -> None:
    url = f"{world.stack.base_url}/mcp"
    assert _tools_call(url, "memory_get").status_code == 401
    auth = {"Authorization": f"Bearer {world.stack.api_key}"}
    conversation = world.heavy.conversation_id
    both = _tools_call(
        f"{url}?conversation=other",
        "memory_get",
        **auth,
        **{"X-Contextq-Conversation": conversation},
    )
    assert both.status_code == 200, both.text
    result = both.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        f"Error: the X-Contextq-Conversation header names {conversation!r} and "
        "?conversation= names 'other': name one conversation"
    )
    too_long = _tools_call(f"{url}?conversation={'x' * 65}", "memory_get", **auth).json()
    assert too_long["result"]["isError"] is True
    assert (
        "is not a conversation id (those are at most 64 characters)"
        in (too_long["result"]["content"][0]["text"])
    )
