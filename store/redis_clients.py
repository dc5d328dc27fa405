"""Redis/Valkey clients: one per process, URL and timeout, never shared across fork.

Every sync use in the API and the worker (conversion and compaction locks, status
notifications, the health check) goes through `redis_client`, so each process
keeps one connection pool per purpose instead of connecting per call.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

_clients: dict[tuple[int, str, float], Any] = {}
_lock = threading.Lock()


def redis_client(url: str, *, timeout_s: float) -> Any:
    """A cached `redis.Redis` for `url` whose commands time out after `timeout_s`."""
    import redis  # noqa: PLC0415 - redis, where Valkey is used

    key = (os.getpid(), url, timeout_s)  # a forked child builds its own
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = redis.Redis.from_url(
                url, socket_timeout=timeout_s, socket_connect_timeout=min(timeout_s, 2.0)
            )
            _clients[key] = client
        return client


_async_clients: dict[tuple[str, float, int], Any] = {}


def async_redis_client(url: str, *, timeout_s: float) -> Any:
    """A `redis.asyncio.Redis` for `url` bound to the running event loop (an asyncio
    client cannot be shared across loops), built once per loop."""
    import redis.asyncio as aredis  # noqa: PLC0415

    key = (url, timeout_s, id(asyncio.get_running_loop()))
    client = _async_clients.get(key)
    if client is None:
        client = aredis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=min(timeout_s, 2.0)
        )
        _async_clients[key] = client
    return client
