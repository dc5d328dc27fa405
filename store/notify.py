"""File status notifications over Redis pub/sub, for long polls.

The worker publishes on `contextq:file:<id>` after it writes a final status;
`GET /v1/files/{id}?wait=S` subscribes and answers as soon as the file is
ready or failed, instead of the client polling in a loop. Best effort: a
lost message only means the long poll answers at its timeout with the
current row, exactly like a plain poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from store.redis_clients import redis_client

log = logging.getLogger("contextq.notify")

CHANNEL_PREFIX = "contextq:file:"

_async_clients: dict[tuple[str, int], Any] = {}  # per event loop: clients are bound to one


def channel(file_id: str) -> str:
    return CHANNEL_PREFIX + file_id


def publish_file_status(redis_url: str | None, file_id: str, status: str) -> None:
    """Tell long polls that `file_id` reached `status`. Never raises."""
    if not redis_url:
        return
    try:
        redis_client(redis_url, timeout_s=2.0).publish(channel(file_id), status)
    except Exception:  # the row is the truth; a lost notification only delays a long poll
        log.warning("could not publish status of file %s", file_id, exc_info=True)


def _async_client(redis_url: str) -> Any:
    import redis.asyncio as aredis  # noqa: PLC0415 - redis, where Valkey is used

    key = (redis_url, id(asyncio.get_running_loop()))
    client = _async_clients.get(key)
    if client is None:
        client = aredis.Redis.from_url(redis_url, socket_connect_timeout=2)
        _async_clients[key] = client
    return client


async def wait_for_file(
    redis_url: str | None,
    file_id: str,
    timeout_s: float,
    is_final: Callable[[], Awaitable[bool]],
) -> None:
    """Return when a final status is published for `file_id`, or after `timeout_s`.

    `is_final` re-reads the row after subscribing, so a status written between
    the caller's first read and the subscription is not missed.
    """
    if not redis_url or timeout_s <= 0:
        return
    try:
        pubsub = _async_client(redis_url).pubsub(ignore_subscribe_messages=True)
    except Exception:
        log.warning("long poll without Redis; answering now", exc_info=True)
        return
    try:
        await pubsub.subscribe(channel(file_id))
        if await is_final():
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while (remaining := deadline - loop.time()) > 0:
            message = await pubsub.get_message(timeout=min(remaining, 5.0))
            if message is not None and message.get("type") == "message":
                return
    except Exception:
        log.warning("long poll on file %s interrupted", file_id, exc_info=True)
    finally:
        with contextlib.suppress(Exception):
            await pubsub.unsubscribe()
            await pubsub.aclose()
