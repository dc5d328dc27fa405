"""Models of the built-in tools' routes (docs/workspaces.md#following-a-stub)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ToolDefinitionList(BaseModel):
    data: list[dict[str, Any]] = Field(
        description="contextq's built-in tools in the asked format (OpenAI, Anthropic or MCP)"
    )


class ToolResult(BaseModel):
    content: str = Field(description="the tool result, as text for the model")
