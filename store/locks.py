"""Locks held in Redis/Valkey across processes and machines."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from contextq.settings import Settings
from store.redis_clients import redis_client

log = logging.getLogger("contextq.locks")

COMPACTION_LOCK_PREFIX = "contextq:lock:compact:"


@contextmanager
def compaction_lock(conversation_id: str, *, settings: Settings) -> Iterator[bool]:
    """Yield True if this caller holds the conversation's compaction lock, else False
    (without waiting).

    redis-py's `Lock` (SET NX PX with a random token; compare-and-delete on release).
    It expires after the task's hard time limit (+ margin), so a worker killed
    mid-run cannot block the conversation for ever; only the token's owner deletes it.
    """
    if not settings.REDIS_URL:
        raise RuntimeError("REDIS_URL is not set; the compaction lock needs Redis/Valkey")
    lock = redis_client(settings.REDIS_URL, timeout_s=10.0).lock(
        COMPACTION_LOCK_PREFIX + conversation_id,
        timeout=settings.TASK_TIME_LIMIT_S + 30,
        blocking=False,
    )
    acquired = bool(lock.acquire())
    try:
        yield acquired
    finally:
        if acquired:
            try:
                lock.release()
            except redis.RedisError:  # expired and taken by another, or unreachable: TTL frees it
                log.warning(
                    "could not release compaction lock of %s", conversation_id, exc_info=True
                )
