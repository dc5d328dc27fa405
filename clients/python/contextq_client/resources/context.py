"""`client.context`: the ready-to-send context of a conversation."""

from __future__ import annotations

import json
from typing import Any, Literal

from contextq_client import models as m
from contextq_client.routing import params, route, seg
from contextq_client.transport import Resource, SyncTransport


class ContextResource(Resource[SyncTransport]):
    @route("GET", "/v1/conversations/{conversation_id}/context")
    def get(
        self,
        conversation_id: str,
        *,
        model: str | None = None,
        format: m.ContextFormat | None = None,
        strategy: str | None = None,
        options: dict[str, Any] | None = None,
        force_filter: bool | None = None,
        skip_filter: bool | None = None,
        tools_used: list[str] | None = None,
        tools: list[dict[str, Any]] | None = None,
        query: str | None = None,
        datetime_granularity: Literal["day", "minute"] | None = None,
        builtin_tools: bool | None = None,
    ) -> m.Context:
        """The ready-to-send context: messages (and `system`), tools, where tokens went.
        `builtin_tools=True` adds contextq's tools that follow a stub (`workspace_read`,
        `workspace_list`, `project_search`; run them with `client.tools.execute`)."""
        query_params = params(
            model=model,
            format=format,
            strategy=strategy,
            options=options,
            force_filter=force_filter,
            skip_filter=skip_filter,
            tools_used=",".join(tools_used) if tools_used is not None else None,
            tools=json.dumps(tools) if tools is not None else None,
            query=query,
            datetime_granularity=datetime_granularity,
            builtin_tools=builtin_tools,
        )
        path = f"/v1/conversations/{seg(conversation_id)}/context"
        response = self._t.request("GET", path, params=query_params)
        return m.Context.model_validate(response.json())
