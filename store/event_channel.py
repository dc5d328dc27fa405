"""Live events over Redis pub/sub: one channel per owner (`contextq:events:<owner id>`).

The recorder publishes each event once its row has committed; `GET /v1/events`
subscribes before it reads the table, so an event is either in what it read or in
what it hears. Best effort: a lost message is found again in the table (a reader
that hears id N+2 after N reads N+1 from there).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from store.redis_clients import redis_client

log = logging.getLogger("contextq.events")

CHANNEL_PREFIX = "contextq:events:"

_async_clients: dict[tuple[str, int], Any] = {}  # per event loop: clients are bound to one


def channel(owner_id: str) -> str:
    return CHANNEL_PREFIX + owner_id


def publish_events(redis_url: str | None, messages: Sequence[tuple[str, bytes]]) -> None:
    """Publish (owner id, JSON bytes) pairs in one round trip. Never raises."""
    if not redis_url or not messages:
        return
    try:
        pipe = redis_client(redis_url, timeout_s=2.0).pipeline(transaction=False)
        for owner_id, payload in messages:
            pipe.publish(channel(owner_id), payload)
        pipe.execute()
    except Exception:  # the table is the truth; a live reader finds the event there
        log.warning("could not publish %d event(s)", len(messages), exc_info=True)


def subscriber(redis_url: str) -> Any:
    """A `redis.asyncio` PubSub (not yet subscribed) on this event loop's client."""
    import redis.asyncio as aredis  # noqa: PLC0415 - redis, where Valkey is used

    key = (redis_url, id(asyncio.get_running_loop()))
    client = _async_clients.get(key)
    if client is None:
        client = aredis.Redis.from_url(redis_url, socket_connect_timeout=2)
        _async_clients[key] = client
    return client.pubsub(ignore_subscribe_messages=True)
