"""Request rate per API key, shared by every API process through Redis
(docs/operations.md#running-the-service).

The `limits` library's fixed window over its asyncio Redis storage (redis-py's client):
one INCR-and-EXPIRE script per request, counted under `contextq:rate:…` keys that expire
with their minute. A window of a minute answers Retry-After with the seconds left in it.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from limits import RateLimitItemPerMinute
from limits.aio.strategies import FixedWindowRateLimiter
from limits.storage import storage_from_string

KEY_PREFIX = "contextq:rate"

_limiters: dict[tuple[str, int], FixedWindowRateLimiter] = {}
_items: dict[int, Any] = {}


def _limiter(url: str) -> FixedWindowRateLimiter:
    key = (url, id(asyncio.get_running_loop()))  # its client is bound to this loop
    limiter = _limiters.get(key)
    if limiter is None:
        storage = storage_from_string(
            "async+" + url,
            implementation="redispy",
            key_prefix=KEY_PREFIX,
            socket_timeout=1.0,
            socket_connect_timeout=1.0,
        )
        limiter = _limiters[key] = FixedWindowRateLimiter(storage)
    return limiter


async def hit(url: str, *, identity: str, per_minute: int) -> int | None:
    """Count one request of `identity`; None when allowed, else the seconds to wait.
    Raises the storage's error when Redis cannot be reached (the caller decides)."""
    item = _items.get(per_minute)
    if item is None:
        item = _items[per_minute] = RateLimitItemPerMinute(per_minute)
    limiter = _limiter(url)
    if await limiter.hit(item, identity):
        return None
    stats = await limiter.get_window_stats(item, identity)
    return max(1, math.ceil(stats.reset_time - time.time()))
