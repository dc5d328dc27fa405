"""`/mcp`: contextq's MCP server over streamable HTTP (docs/mcp.md).

The caller sends the API key as for `/v1` (`Authorization: Bearer <key>`, the same
rate limit) and names the conversation in the `X-Contextq-Conversation` header or the
`conversation` query parameter (`/mcp?conversation=c_…`, for clients that can set only a
URL and a token): the tools then act on that conversation of the key's owner (another
owner's answers as a missing one: an error result, no data). A request that names none
(or two different ones) is still served: `initialize` succeeds and every tool call is an
error result saying how to name one, which a person reads in the MCP client, where a
failed transport request shows only "Server returned an error response". Stateless (no
session kept between requests, so any API worker process answers any request) with JSON
answers. Each request gets a server bound to its owner and conversation
(`api.mcp_server.build_server`), whose tools run `service.tools.execute_tool` like
`POST /v1/conversations/{id}/tools/{name}`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.deps import get_owner_id, write
from api.errors import status_for
from api.mcp_server import INSTRUCTIONS, ToolRefused, build_server
from contextq import builtin_tools
from contextq.errors import ContextqError, ValidationFailed
from contextq.settings import get_settings
from service import tools

log = logging.getLogger("contextq.mcp")

PATH = "/mcp"
CONVERSATION_HEADER = "X-Contextq-Conversation"
CONVERSATION_PARAM = "conversation"
MAX_ID_CHARS = 64
HOW_TO_NAME = (
    f"connect to /mcp?{CONVERSATION_PARAM}=<conversation id> (or send the header "
    f"`{CONVERSATION_HEADER}: <conversation id>`); the id is the one `POST /v1/conversations` "
    "answered, and the tools act on that conversation"
)
NOT_NAMED = f"this MCP connection names no conversation, so no tool can run: {HOW_TO_NAME}"


def refusal_text(exc: ContextqError) -> str:
    """An engine error as the text of an error result, as the API would answer it (its
    status, and the argument it names), so both transports say the same."""
    field = f"{exc.field}: " if isinstance(exc, ValidationFailed) and exc.field else ""
    return f"Error ({status_for(exc)}): {field}{exc}"


def conversation_named(request: Request) -> tuple[str | None, str]:
    """(the conversation id, "") when the request names one; else (None, why not: what
    each tool call answers and `initialize`'s instructions open with)."""
    header = request.headers.get(CONVERSATION_HEADER, "").strip()
    param = request.query_params.get(CONVERSATION_PARAM, "").strip()
    if header and param and header != param:
        return None, (
            f"the {CONVERSATION_HEADER} header names {header[:MAX_ID_CHARS]!r} and "
            f"?{CONVERSATION_PARAM}= names {param[:MAX_ID_CHARS]!r}: name one conversation"
        )
    value = header or param
    if not value:
        return None, NOT_NAMED
    if len(value) > MAX_ID_CHARS:
        return None, (
            f"{value[:MAX_ID_CHARS]!r}… is not a conversation id (those are at most "
            f"{MAX_ID_CHARS} characters): {HOW_TO_NAME}"
        )
    return value, ""


class McpEndpoint:
    """The ASGI app at `/mcp` (an error before the MCP exchange is the API's JSON)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _handle(scope, receive, send)


async def _handle(scope: Scope, receive: Receive, send: Send) -> None:
    request = Request(scope, receive)
    owner_id = await get_owner_id(request)
    conversation_id, problem = conversation_named(request)

    async def execute(name: str, arguments: Mapping[str, Any]) -> str:
        if conversation_id is None:
            raise ToolRefused(f"Error: {problem}")
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

    instructions = INSTRUCTIONS if conversation_id else f"Note: {problem}.\n\n{INSTRUCTIONS}"
    server = build_server(builtin_tools.definitions("mcp"), execute, instructions=instructions)
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
