"""Routes: contextq's built-in tools (docs/workspaces.md#following-a-stub).

`GET /v1/tools` lists their definitions (the OpenAI, Anthropic or MCP shape; the SDK's
integrations and the stdio MCP server read them here). `POST /v1/conversations/{id}/
tools/{name}` executes one with the model's JSON arguments as the body and answers the
tool result text; the work is `service.tools.execute_tool`, shared with `/mcp`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from api.deps import OwnerDep, SettingsDep, write
from api.schemas.tools import ToolDefinitionList, ToolResult
from contextq import builtin_tools
from service import tools

router = APIRouter(tags=["tools"])


@router.get("/tools", response_model=ToolDefinitionList)
async def list_tools(
    owner_id: OwnerDep, format: builtin_tools.ToolFormat = "openai"
) -> ToolDefinitionList:
    """The definitions of the built-in tools (`workspace_read`, `workspace_list`,
    `project_search`, `memory_get`, `memory_add_decision`, `memory_record_error`)."""
    return ToolDefinitionList(data=builtin_tools.definitions(format))


@router.post("/conversations/{conversation_id}/tools/{name}", response_model=ToolResult)
async def execute_tool(
    conversation_id: str,
    name: str,
    owner_id: OwnerDep,
    settings: SettingsDep,
    arguments: dict[str, Any] | None = Body(  # noqa: B008  FastAPI's way to take any object
        None, description="the model's arguments, a JSON object (none: `{}`)"
    ),
) -> ToolResult:
    """Run a built-in tool on this conversation; the result as text. 404 for an unknown
    tool or conversation, 422 naming the argument for a bad one or a refused path."""
    content = await write(
        tools.execute_tool,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        name=name,
        arguments=arguments,
    )
    return ToolResult(content=content)
