"""`contextq mcp --conversation ID`: contextq's MCP server over stdio (docs/mcp.md), for
desktop and coding agents that start their MCP servers as subprocesses.

It talks to a running API through the thin client (`contextq_client.AsyncClient`, the
key from `--key`, CONTEXTQ_API_KEY or the dev key), lists the built-in tools it serves
from `GET /v1/tools?format=mcp`, and runs each call with `tools.execute` on the one
conversation it was started for. stdout carries the protocol only; anything for a
person goes to stderr.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from api.mcp_server import ToolRefused, build_server
from cli.client import ClientError, Target
from contextq_client import APIError, AsyncClient, ContextqError
from contextq_client.integrations.tools import error_text


def serve_stdio(target: Target, conversation_id: str) -> None:
    """Serve until the client closes stdin; ClientError when the API cannot be used."""
    anyio.run(_serve, target, conversation_id)


async def _serve(target: Target, conversation_id: str) -> None:
    async with AsyncClient(target.api, api_key=target.key) as client:
        try:  # a wrong key, URL or conversation fails here, before the client connects
            await client.conversations.get(conversation_id)
            definitions = (await client.tools.list(format="mcp")).data
        except ContextqError as exc:
            raise ClientError(f"{target.api}: {exc}") from None

        async def execute(name: str, arguments: Mapping[str, Any]) -> str:
            try:
                result = await client.tools.execute(conversation_id, name, dict(arguments))
            except APIError as exc:
                raise ToolRefused(error_text(exc)) from None
            except ContextqError as exc:  # the API went away meanwhile
                raise ToolRefused(str(exc)) from None
            return result.content

        server = build_server(definitions, execute)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
