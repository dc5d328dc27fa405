"""contextq as a Model Context Protocol server (docs/mcp.md), transport-free: the `mcp`
SDK's low-level `Server` over the built-in tools, built for one conversation with the
executor that runs a tool.

Two adapters use it: `/mcp` on the API (`api/mcp.py`: streamable HTTP, the executor is
`service.tools.execute_tool`) and `contextq mcp` (`cli/mcp.py`: stdio, the executor is
the thin client's `tools.execute` over HTTP). The tool definitions come from
`contextq.builtin_tools` (the API lists them at `GET /v1/tools?format=mcp`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from contextq import __version__

log = logging.getLogger("contextq.mcp")

Execute = Callable[[str, Mapping[str, Any]], Awaitable[str]]
INSTRUCTIONS = (
    "contextq keeps this conversation's context within the model's window. Old or large "
    "tool results in it stand as a stub or a preview naming a /workspace/… path: read "
    "that path with workspace_read (in portions: offset and limit). workspace_list lists "
    "the workspace, project_search searches the project's documents, and the memory "
    "tools read the conversation's memory and record decisions and errors."
)


class ToolRefused(Exception):
    """A tool call refused (bad arguments, a path outside the workspace, another owner's
    conversation): its text goes back to the model as an error result."""


def build_server(
    definitions: Sequence[Mapping[str, Any]], execute: Execute, *, instructions: str = INSTRUCTIONS
) -> Server[Any]:
    """The MCP server listing `definitions` (MCP shape: name, description, inputSchema)
    and running each call with `execute(name, arguments)`; `instructions` go to the
    client at `initialize`."""
    tools = [types.Tool.model_validate(d) for d in definitions]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            text = await execute(params.name, params.arguments or {})
        except ToolRefused as refused:
            return _text(str(refused), error=True)
        return _text(text, error=False)

    return Server(
        "contextq",
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _text(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)
