"""`/mcp`: contextq's MCP server over streamable HTTP (SPEC §12).

The caller sends the API key as for `/v1` (`Authorization: Bearer <key>`, the same
rate limit) and names the conversation in the `X-Contextq-Conversation` header: the tools
then act on that conversation of the key's owner (another owner's answers as a missing
one: an error result, no data). Stateless (no session kept between requests, so any
API worker process answers any request) with JSON answers. Each request gets a server
bound to its owner and conversation (`api.mcp_server.build_server`), whose tools run
`service.tools.execute_tool` like `POST /v1/conversations/{id}/tools/{name}`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.deps import get_owner_id, write
from api.errors import status_for
from api.mcp_server import ToolRefused, build_server
from contextq import builtin_tools
from contextq.errors import ContextqError, ValidationFailed
from contextq.settings import get_settings
from service import tools

log = logging.getLogger("contextq.mcp")

PATH = "/mcp"
CONVERSATION_HEADER = "X-Contextq-Conversation"
MAX_ID_CHARS = 64


def refusal_text(exc: ContextqError) -> str:
    """An engine error as the text of an error result, as the API would answer it (its
    status, and the argument it names), so both transports say the same."""
    field = f"{exc.field}: " if isinstance(exc, ValidationFailed) and exc.field else ""
    return f"Error ({status_for(exc)}): {field}{exc}"


def _conversation_id(request: Request) -> str:
    value = request.headers.get(CONVERSATION_HEADER, "").strip()
    if not value or len(value) > MAX_ID_CHARS:
        raise HTTPException(
            400,
            f"name the conversation in the {CONVERSATION_HEADER} header (its id, as "
            "`POST /v1/conversations` answered it); the tools act on that conversation",
        )
    return value


class McpEndpoint:
    """The ASGI app at `/mcp` (an error before the MCP exchange is the API's JSON)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _handle(scope, receive, send)


async def _handle(scope: Scope, receive: Receive, send: Send) -> None:
    request = Request(scope, receive)
    owner_id = await get_owner_id(request)
    conversation_id = _conversation_id(request)

    async def execute(name: str, arguments: Mapping[str, Any]) -> str:
        try:
            text: str = await write(
                tools.execute_tool,
                settings=get_settings(),
                owner_id=owner_id,
                conversation_id=conversation_id,
                name=name,
                arguments=dict(arguments),
            )
        except ContextqError as exc:
            raise ToolRefused(refusal_text(exc)) from None
        return text

    server = build_server(builtin_tools.definitions("mcp"), execute)
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
