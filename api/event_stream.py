"""`GET /v1/events` as a stream: the owner's events from the table, then live.

It subscribes to the owner's Redis channel first (`store.event_channel`), then reads
the table after the last id the client has (`Last-Event-ID`, else the newest id: only
new events), so no event falls between the two. A published event that follows the last
one sent goes out as heard; any gap (a lost message, a rolled-back id) is read from the
table. Idle streams get a heartbeat comment every EVENTS_HEARTBEAT_S. Without Redis it
polls the table every second instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
from fastapi.sse import ServerSentEvent

from api.deps import read
from contextq.settings import Settings
from service import events
from store.event_channel import channel, subscriber

log = logging.getLogger("contextq.events")

POLL_S = 1.0


def sse(event: dict[str, Any]) -> ServerSentEvent:
    body = {k: event[k] for k in ("type", "timestamp", "data")}
    return ServerSentEvent(
        id=str(event["id"]), event=event["type"], raw_data=orjson.dumps(body).decode()
    )


async def _subscribe(redis_url: str | None, owner_id: str) -> Any:
    if not redis_url:
        return None
    pubsub = None
    try:
        pubsub = subscriber(redis_url)
        await pubsub.subscribe(channel(owner_id))
        return pubsub
    except Exception:
        log.warning("events stream without Redis: polling the table", exc_info=True)
        await _close(pubsub)
        return None


async def _close(pubsub: Any) -> None:
    if pubsub is not None:
        with contextlib.suppress(Exception):
            await pubsub.unsubscribe()
            await pubsub.aclose()


async def follow(
    *, settings: Settings, owner_id: str, last_event_id: int | None
) -> AsyncIterator[ServerSentEvent]:
    """The stream's messages, for ever (the client ends it by going away)."""
    pubsub = await _subscribe(settings.REDIS_URL, owner_id)
    try:
        cursor = last_event_id
        if cursor is None:
            cursor = await read(events.latest_event_id, owner_id=owner_id)
        yield ServerSentEvent(comment=f"events of this key's owner after id {cursor}")
        need_read, last_sent = True, time.monotonic()
        while True:
            if need_read:
                batch = await read(
                    events.events_after, settings=settings, owner_id=owner_id, after_id=cursor
                )
                for event in batch:
                    yield sse(event)
                    cursor, last_sent = event["id"], time.monotonic()
                if len(batch) == events.PAGE:
                    continue
                need_read = False
            heard, pubsub = await _listen(pubsub, settings.EVENTS_HEARTBEAT_S)
            if heard is None:
                need_read = need_read or pubsub is None
                if time.monotonic() - last_sent >= settings.EVENTS_HEARTBEAT_S:
                    yield ServerSentEvent(comment="heartbeat")
                    last_sent = time.monotonic()
            elif heard["id"] == cursor + 1:
                yield sse(heard)
                cursor, last_sent = heard["id"], time.monotonic()
            elif heard["id"] > cursor:
                need_read = True
    finally:
        await _close(pubsub)


async def _listen(pubsub: Any, heartbeat_s: float) -> tuple[dict[str, Any] | None, Any]:
    """(the next published event or None after a while, the pubsub still usable)."""
    if pubsub is None:
        await asyncio.sleep(min(POLL_S, heartbeat_s))
        return None, None
    try:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=heartbeat_s)
    except Exception:
        log.warning("events stream lost Redis: polling the table", exc_info=True)
        await _close(pubsub)
        return None, None
    if message is None or message.get("type") != "message":
        return None, pubsub
    try:
        event = orjson.loads(message["data"])
        return (event if isinstance(event.get("id"), int) else None), pubsub
    except (orjson.JSONDecodeError, AttributeError):
        return None, pubsub
