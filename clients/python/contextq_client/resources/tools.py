"""`client.tools`: contextq's built-in tools, listed in a format's shape or run."""

from __future__ import annotations

from typing import Any

from contextq_client import models as m
from contextq_client.routing import JsonObject, params, route, seg
from contextq_client.transport import Resource, SyncTransport


class Tools(Resource[SyncTransport]):
    """contextq's built-in tools (docs/workspaces.md#following-a-stub): read a workspace path in
    portions, list the workspace, search the project, read the memory, record a decision or an
    error."""

    @route("GET", "/v1/tools")
    def list(self, *, format: m.ToolFormat = "openai") -> m.ToolDefinitionList:
        """Their definitions, in a context format's shape (`format=openai`, …) or MCP's."""
        response = self._t.request("GET", "/v1/tools", params=params(format=format))
        return m.ToolDefinitionList.model_validate(response.json())

    @route("POST", "/v1/conversations/{conversation_id}/tools/{name}")
    def execute(
        self, conversation_id: str, name: str, arguments: JsonObject | str | None = None
    ) -> m.ToolResult:
        """Run one on the conversation with the model's arguments (an object, or the JSON
        text of one as OpenAI's tool calls carry it); `.content` is the result's text."""
        path = f"/v1/conversations/{seg(conversation_id)}/tools/{seg(name)}"
        if isinstance(arguments, str):
            sent: dict[str, Any] = {
                "content": arguments.encode(),
                "headers": {"Content-Type": "application/json"},
            }
        else:
            sent = {"json": arguments or {}}
        response = self._t.request("POST", path, **sent)
        return m.ToolResult.model_validate(response.json())
