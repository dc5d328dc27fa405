"""Request dependencies (the authenticated owner, the settings) and the two adapters
through which every route calls its use case: `read` and `write`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from contextq.settings import Settings, get_settings
from store.db import read_session, session_scope
from store.keys import hash_key, owner_for_key

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
# query, not two. Only successes are cached; a revoked key stops working within the TTL.
AUTH_CACHE_TTL_S = 10.0
AUTH_CACHE_MAX = 10_000
_auth_cache: dict[str, tuple[str, float]] = {}


def _cached_owner(key: str) -> str | None:
    hit = _auth_cache.get(key)
    if hit is None:
        return None
    owner_id, expires = hit
    if time.monotonic() > expires:
        _auth_cache.pop(key, None)
        return None
    return owner_id


def _remember_owner(key: str, owner_id: str) -> None:
    if len(_auth_cache) >= AUTH_CACHE_MAX:
        _auth_cache.clear()
    _auth_cache[key] = (owner_id, time.monotonic() + AUTH_CACHE_TTL_S)


def _lookup_owner(key: str) -> str | None:
    with read_session() as session:
        return owner_for_key(session, key)


async def get_owner_id(request: Request) -> str:
    """The authenticated owner. Async on purpose: a cached key costs no thread hop (sync
    dependencies each take a trip through the threadpool)."""
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise HTTPException(
            401,
            "missing API key: send `Authorization: Bearer <key>` (create one with "
            "`contextq keys create`)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    key = key.strip()
    cache_key = f"{get_settings().database_url}|{hash_key(key)}"
    owner_id = _cached_owner(cache_key)
    if owner_id is not None:
        return owner_id
    owner_id = await run_in_threadpool(_lookup_owner, key)
    if owner_id is None:
        raise HTTPException(401, "invalid API key", headers={"WWW-Authenticate": "Bearer"})
    _remember_owner(cache_key, owner_id)
    return owner_id


OwnerDep = Annotated[str, Depends(get_owner_id)]


async def _current_settings() -> Settings:
    return get_settings()  # cached; async so it runs on the event loop, not in a thread


SettingsDep = Annotated[Settings, Depends(_current_settings)]
