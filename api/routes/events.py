"""Route: `GET /v1/events`, the owner's events as Server-Sent Events (docs/events.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header
from fastapi.sse import EventSourceResponse, ServerSentEvent

from api.deps import OwnerDep, SettingsDep
from api.event_stream import follow

router = APIRouter(tags=["events"])


@router.get("/events", response_class=EventSourceResponse)
async def stream_events(
    owner_id: OwnerDep,
    settings: SettingsDep,
    last_event_id: Annotated[
        int | None,
        Header(
            ge=0,
            description="resume after this event id (kept 24 h); without it, new events only",
        ),
    ] = None,
) -> AsyncIterator[ServerSentEvent]:
    """`id:` the event id (per owner, increasing), `event:` its type, `data:`
    `{"type", "timestamp", "data"}`; a heartbeat comment when idle."""
    async for message in follow(settings=settings, owner_id=owner_id, last_event_id=last_event_id):
        yield message
