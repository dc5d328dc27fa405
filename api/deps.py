"""Request dependencies (the authenticated owner with its key's request rate, the
settings) and the two adapters through which every route calls its use case: `read` and
`write`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from contextq.errors import QuotaExceeded, Unauthenticated
from contextq.settings import Settings, get_settings
from store import rate_limit
from store.db import read_session, session_scope
from store.keys import (
    AUTH_GENERATION_KEY,
    LAST_USED_EVERY_S,
    KeyOwner,
    hash_key,
    lookup_key,
    note_used,
)
from store.redis_clients import async_redis_client
from store.tables import utcnow

log = logging.getLogger("contextq.api")

T = TypeVar("T")


def _call_in_session(fn: Callable[..., T], write: bool, kwargs: dict[str, Any]) -> T:
    if not write:  # nothing to commit: closing the session ends the read (cheaper than a
        with read_session() as session:  # commit, on the API's hottest path)
            return fn(session=session, **kwargs)
    with session_scope() as session:
        return fn(session=session, **kwargs)


async def read(fn: Callable[..., T], /, **kwargs: Any) -> T:
    """Run the use case `fn(session=…, **kwargs)` in a read-only transaction, in ONE
    trip to the threadpool (every route calls its use case through `read` or `write`)."""
    return await run_in_threadpool(_call_in_session, fn, False, kwargs)


async def write(fn: Callable[..., T], /, **kwargs: Any) -> T:
    """Run the use case `fn(session=…, **kwargs)` in a write transaction, committed
    before this returns (and so before anything `service.enqueue.after_commit`
    registered is sent), in ONE trip to the threadpool."""
    return await run_in_threadpool(_call_in_session, fn, True, kwargs)


# Valid keys are remembered for a few seconds per process, so polling a file costs one
# query, not two. Only successes are cached. A revocation reaches every API process
# through the broker's auth generation (`store.keys`), read at most every
# AUTH_GENERATION_CHECK_S: a cached entry from an older generation is looked up again,
# so a revoked key answers 401 within a second everywhere (within the TTL without Redis).
AUTH_CACHE_TTL_S = 10.0
AUTH_CACHE_MAX = 10_000
AUTH_GENERATION_CHECK_S = 0.25


@dataclass
class _AuthCache:
    entries: dict[str, tuple[str, float, int]] = field(default_factory=dict)
    generation: int = 0
    checked_at: float = float("-inf")
    background: set[asyncio.Task[Any]] = field(default_factory=set)

    def get(self, key: str) -> str | None:
        hit = self.entries.get(key)
        if hit is None:
            return None
        owner_id, expires, generation = hit
        if time.monotonic() > expires or generation != self.generation:
            self.entries.pop(key, None)
            return None
        return owner_id

    def put(self, key: str, owner_id: str, generation: int) -> None:
        if len(self.entries) >= AUTH_CACHE_MAX:
            self.entries.clear()
        self.entries[key] = (owner_id, time.monotonic() + AUTH_CACHE_TTL_S, generation)

    async def refresh_generation(self, redis_url: str | None) -> None:
        now = time.monotonic()
        if not redis_url or now - self.checked_at < AUTH_GENERATION_CHECK_S:
            return
        self.checked_at = now
        try:
            raw = await async_redis_client(redis_url, timeout_s=0.5).get(AUTH_GENERATION_KEY)
        except Exception as exc:  # the TTL still bounds how long a revoked key is honoured
            log.debug("auth generation unavailable: %s", exc)
            return
        self.generation = int(raw or 0)


_auth = _AuthCache()


def _lookup_owner(key: str) -> KeyOwner | None:
    with read_session() as session:
        return lookup_key(session, key)


def _note_used(key_id: str) -> None:
    try:
        with session_scope() as session:
            note_used(session, key_id=key_id)
    except Exception as exc:  # bookkeeping only; never fails a request
        log.debug("could not record the use of key %s: %s", key_id, exc)


def _note_used_later(found: KeyOwner) -> None:
    """At most once a minute per key, off the request's path (a background thread)."""
    last = found.last_used_at
    if last is not None and last.tzinfo is None:
        last = last.replace(tzinfo=UTC)
    if last is not None and (utcnow() - last).total_seconds() < LAST_USED_EVERY_S:
        return
    task = asyncio.get_running_loop().create_task(run_in_threadpool(_note_used, found.key_id))
    _auth.background.add(task)
    task.add_done_callback(_auth.background.discard)


async def _check_rate(settings: Settings, key_hash: str) -> None:
    per_minute, url = settings.RATE_LIMIT_PER_MINUTE, settings.REDIS_URL
    if not per_minute or not url:
        return
    try:
        wait_s = await rate_limit.hit(url, identity=key_hash[:32], per_minute=per_minute)
    except Exception as exc:  # the broker is down: serve rather than refuse everyone
        log.warning("rate limit not checked (broker unavailable): %s", exc)
        return
    if wait_s is not None:
        raise QuotaExceeded(
            f"RATE_LIMIT_PER_MINUTE exceeded: this key may make {per_minute} requests a "
            f"minute; retry in {wait_s} s",
            limit="RATE_LIMIT_PER_MINUTE",
            retry_after_s=wait_s,
        )


async def get_owner_id(request: Request) -> str:
    """The authenticated owner, within the key's request rate. Async on purpose: a cached
    key costs no thread hop (sync dependencies each take a trip through the threadpool)."""
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthenticated(
            "missing API key: send `Authorization: Bearer <key>` (create one with "
            "`contextq keys create`)"
        )
    key = key.strip()
    settings = get_settings()
    key_hash = hash_key(key)
    cache_key = f"{settings.database_url}|{key_hash}"
    await _auth.refresh_generation(settings.REDIS_URL)
    owner_id = _auth.get(cache_key)
    if owner_id is None:
        generation = _auth.generation  # before the lookup: a revocation after it wins
        found = await run_in_threadpool(_lookup_owner, key)
        if found is None:
            raise Unauthenticated("invalid API key")
        _auth.put(cache_key, found.owner_id, generation)
        _note_used_later(found)
        owner_id = found.owner_id
    await _check_rate(settings, key_hash)
    return owner_id


OwnerDep = Annotated[str, Depends(get_owner_id)]


async def _current_settings() -> Settings:
    return get_settings()  # cached; async so it runs on the event loop, not in a thread


SettingsDep = Annotated[Settings, Depends(_current_settings)]
