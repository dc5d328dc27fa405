"""The conversion cache (contextq.files.registry.ConversionCache) over the database.

An entry maps a key (sha256 of the bytes + converter version + options) to a
markdown blob, in whichever blob store is configured (`store.blobs`). Shared across
owners and workers. `lock(key)` is a Redis lock (redis-py `Lock` with a short time to
live its holder renews while converting, blocking wait) so at most one conversion of the
same key runs across all workers and a dead holder's lock goes within that time to live;
a waiter re-checks `get` after it gets the lock. If Redis cannot be reached the
conversion runs unlocked (correct, only possibly duplicated) and a warning is logged.
If the database is unavailable the cache is skipped (a miss; nothing stored), so a
document converted during an outage is not failed for it: its result write waits the
outage out (`service.files.outage`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

from sqlalchemy.exc import IntegrityError

from store.blobs import BlobStore, BlobStoreUnavailable
from store.db import UNAVAILABLE_ERRORS, read_session, session_scope
from store.redis_clients import redis_client
from store.tables import ConversionCacheEntry, utcnow

log = logging.getLogger(__name__)

LOCK_PREFIX = "contextq:conversion-lock:"

REDIS_TIMEOUT_S = 5.0
LOCK_TTL_S = 30.0  # a dead holder's lock lasts at most this; a live one renews it


class DbConversionCache:
    def __init__(
        self,
        *,
        blobs: BlobStore,
        redis_url: str | None,
        lock_timeout_s: float,
        wait_timeout_s: float,
    ) -> None:
        self.blobs = blobs
        self.redis_url = redis_url
        self.lock_timeout_s = lock_timeout_s  # a crashed holder's lock expires after this
        self.wait_timeout_s = wait_timeout_s  # a waiter gives up and converts itself after this

    def get(self, key: str) -> str | None:
        try:
            with read_session() as session:
                entry = session.get(ConversionCacheEntry, key)
        except UNAVAILABLE_ERRORS as exc:  # a cache: convert; the result write waits it out
            log.warning("conversion cache: not read, database unavailable: %s", exc)
            return None
        if entry is None:
            return None
        try:
            text = self.blobs.read_bytes(entry.markdown_sha256).decode("utf-8")
        except (FileNotFoundError, ValueError, BlobStoreUnavailable):
            return None  # blob gone (or its store away): convert again, `put` repairs it
        with contextlib.suppress(Exception), session_scope() as session:
            hit = session.get(ConversionCacheEntry, key)
            if hit is not None:
                hit.hits += 1
                hit.last_hit_at = utcnow()
        return text

    def put(self, key: str, markdown: str) -> None:
        # stored as converted: the engine's `finalize` cleans what leaves the pipeline
        try:
            sha = self.blobs.put_bytes(markdown.encode("utf-8", "replace"))
        except BlobStoreUnavailable as exc:  # a cache: the conversion itself stands
            log.warning("conversion cache: not stored (%s)", exc)
            return
        try:
            with session_scope() as session:
                entry = session.get(ConversionCacheEntry, key)
                if entry is None:
                    session.add(
                        ConversionCacheEntry(key=key, markdown_sha256=sha, size_chars=len(markdown))
                    )
                else:
                    entry.markdown_sha256, entry.size_chars = sha, len(markdown)
        except IntegrityError:
            pass  # another worker stored the same key first: same content
        except UNAVAILABLE_ERRORS as exc:  # the conversion itself stands
            log.warning("conversion cache: not stored, database unavailable: %s", exc)

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """At most one conversion of `key` at a time across workers. The lock lives
        `lock_timeout_s` and its holder renews it every third of that while it converts,
        so a holder that dies (SIGKILL, a lost host) frees it within `lock_timeout_s`
        instead of the whole task time limit; a waiter gives up after `wait_timeout_s`
        and converts itself (correct, only duplicated)."""
        if not self.redis_url:
            yield
            return
        import redis  # noqa: PLC0415 - redis, where Valkey is used

        lk = redis_client(self.redis_url, timeout_s=REDIS_TIMEOUT_S).lock(
            LOCK_PREFIX + key,
            timeout=self.lock_timeout_s,
            blocking=True,
            blocking_timeout=self.wait_timeout_s,
            thread_local=False,  # its token is renewed from the heartbeat thread
        )
        acquired = False
        try:
            acquired = bool(lk.acquire())
        except redis.RedisError as exc:
            log.warning("conversion lock unavailable (%s); converting without it", exc)
        if not acquired:
            log.warning("conversion lock for %s not acquired in time; converting anyway", key)
        done = threading.Event()
        if acquired:
            threading.Thread(
                target=_renew, args=(lk, done, self.lock_timeout_s / 3), daemon=True
            ).start()
        try:
            yield
        finally:
            done.set()
            if acquired:
                with contextlib.suppress(redis.RedisError):
                    lk.release()


def _renew(lk: Any, done: threading.Event, every_s: float) -> None:
    """Reset the lock's time to live every `every_s` until `done` (the holder's heartbeat)."""
    import redis  # noqa: PLC0415

    while not done.wait(every_s):
        try:
            lk.reacquire()
        except redis.RedisError as exc:  # LockError too: the lock was lost
            log.warning("conversion lock not renewed (%s)", exc)
            return
