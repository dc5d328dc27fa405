"""Route: the ready-to-send context (SPEC §2, history part of §6).

Synchronous and cheap: it never calls an LLM and never waits on a task. The work is
`service.history.build_context`; this adapter only parses the query string.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Query, Response

from api.deps import OwnerDep, SettingsDep, read
from api.responses import json_response
from contextq.errors import ValidationFailed
from service import history
from store.metrics import observe_context_build

router = APIRouter(tags=["context"])

MAX_OPTIONS_CHARS = 10_000


def _parse_options(raw: str | None) -> dict[str, Any] | None:
    if raw is None or raw == "":
        return None
    if len(raw) > MAX_OPTIONS_CHARS:
        raise ValidationFailed("options is too long", field="options")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise ValidationFailed("options must be a JSON object", field="options") from None
    if not isinstance(value, dict):
        raise ValidationFailed("options must be a JSON object", field="options")
    return value


def _tools_used(values: list[str] | None) -> list[str]:
    names: list[str] = []
    for value in values or ():
        names.extend(n.strip() for n in value.split(",") if n.strip())
    return names


@router.get("/conversations/{conversation_id}/context")
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
    format: Literal["openai", "anthropic"] = "openai",
    tools_used: list[str] | None = Query(None),  # noqa: B008
) -> Response:
    """The message list to send now, with the filtering report (SPEC §2)."""
    answer = await read(
        history.build_context,
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        model=model,
        strategy=strategy,
        options=_parse_options(options),
        force_filter=force_filter,
        skip_filter=skip_filter,
        output_format=format,
        tools_used=_tools_used(tools_used),
    )
    observe_context_build(answer)
    return json_response(answer)
