"""Route: the ready-to-send context (docs/history.md#the-answer,
docs/history.md#the-ready-to-send-context).

Synchronous and cheap: it never calls an LLM and never waits on a task. The work is
`service.history.build_context`; this adapter only parses the query string.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Query, Response

from api.deps import OwnerDep, SettingsDep, read
from api.responses import json_response
from api.schemas.context import ContextAnswer
from contextq.errors import ValidationFailed
from contextq.history.types import FormatName
from service import history
from store.metrics import observe_context_build

router = APIRouter(tags=["context"])

MAX_OPTIONS_CHARS = 10_000
MAX_TOOLS_CHARS = 200_000


def _parse_json(raw: str | None, field: str, kind: type, max_chars: int) -> Any:
    if raw is None or raw == "":
        return None
    what = "a JSON object" if kind is dict else "a JSON list"
    if len(raw) > max_chars:
        raise ValidationFailed(f"{field} is too long (at most {max_chars} characters)", field=field)
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise ValidationFailed(f"{field} must be {what}", field=field) from None
    if not isinstance(value, kind):
        raise ValidationFailed(f"{field} must be {what}", field=field)
    return value


def _tools_used(values: list[str] | None) -> list[str] | None:
    """Names given as repeated parameters or comma-separated; None when not given (then
    the turn's tool calls tell whether a search tool ran)."""
    if values is None:
        return None
    names: list[str] = []
    for value in values:
        names.extend(n.strip() for n in value.split(",") if n.strip())
    return names


@router.get("/conversations/{conversation_id}/context", response_model=ContextAnswer)
async def get_context(
    conversation_id: str,
    *,
    owner_id: OwnerDep,
    settings: SettingsDep,
    model: str | None = Query(None, max_length=200),
    strategy: str | None = Query(None, max_length=64),
    options: str | None = Query(None),
    force_filter: bool = False,
    skip_filter: bool = False,
    format: FormatName = "openai",
    tools_used: list[str] | None = Query(None),  # noqa: B008
    tools: str | None = Query(None, description="JSON list of tool definitions (either format)"),
    query: str | None = Query(None, max_length=2000),
    datetime_granularity: Literal["day", "minute"] | None = None,
    builtin_tools: bool = Query(
        False,
        description="add contextq's own tools (workspace_read, workspace_list, project_search)",
    ),
) -> Response:
    """The message list to send now, with where its tokens went (docs/api.md#routes,
    docs/history.md#the-ready-to-send-context)."""
    answer = await read(
        history.build_context,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        model=model,
        strategy=strategy,
        options=_parse_json(options, "options", dict, MAX_OPTIONS_CHARS),
        force_filter=force_filter,
        skip_filter=skip_filter,
        output_format=format,
        tools_used=_tools_used(tools_used),
        tools=_parse_json(tools, "tools", list, MAX_TOOLS_CHARS),
        query=query,
        datetime_granularity=datetime_granularity,
        builtin_tools=builtin_tools,
    )
    observe_context_build(answer)
    return json_response(answer)
