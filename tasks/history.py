"""Tasks over history: `compact_conversation` and the beat sweep `sweep_compactions`.

Each is a few lines over a plain function in `store/compaction_service.py`.
One compaction runs per conversation at a time: a Redis lock (redis-py's `Lock`:
`SET NX PX` with a random token, released only by its owner) that holds across
workers and across two beat instances. A trigger that finds
the lock taken does nothing; its job (if any) ends `succeeded` with
`{"skipped": "already running"}`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery import shared_task

from contextq.settings import Settings, get_settings
from worker import names

log = logging.getLogger("contextq.tasks.history")

LOCK_PREFIX = "contextq:lock:compact:"


@contextmanager
def conversation_lock(conversation_id: str, *, settings: Settings) -> Iterator[bool]:
    """Yield True if this caller holds the conversation's compaction lock, else False.

    redis-py's `Lock` (SET NX PX with a random token; compare-and-delete on release).
    It expires after the task's hard time limit (+ margin), so a worker killed
    mid-run cannot block the conversation for ever; only the token's owner deletes it.
    """
    import redis

    from store.redis_clients import redis_client

    if not settings.REDIS_URL:
        raise RuntimeError("REDIS_URL is not set; the compaction lock needs Redis/Valkey")
    lock = redis_client(settings.REDIS_URL, timeout_s=10.0).lock(
        LOCK_PREFIX + conversation_id, timeout=settings.TASK_TIME_LIMIT_S + 30, blocking=False
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


def enqueue_compaction(conversation_id: str, job_id: str | None, *, settings: Settings) -> bool:
    """Send `compact_conversation` (call only after the job row is committed).

    If the broker cannot take it, the job ends `failed` saying so (the beat sweep
    tries again later for a conversation past its threshold) and False is returned.
    """
    from service import enqueue

    try:
        enqueue.compact_conversation(conversation_id, job_id, settings=settings)
    except Exception as exc:
        log.warning("could not enqueue compaction of %s: %s", conversation_id, exc)
        from store.compaction_service import fail_job

        fail_job(job_id, error=f"could not enqueue the compaction (broker unavailable): {exc}")
        return False
    return True


@shared_task(name=names.COMPACT_CONVERSATION)  # type: ignore[untyped-decorator]
def compact_conversation(conversation_id: str, job_id: str | None = None) -> dict[str, Any]:
    from store.compaction_service import run_compaction, skip_job

    settings = get_settings()
    with conversation_lock(conversation_id, settings=settings) as held:
        if not held:
            log.info("compaction of %s already running; skipped", conversation_id)
            return skip_job(job_id, reason="already running")
        return run_compaction(conversation_id, job_id=job_id, settings=settings)


@shared_task(name=names.SWEEP_COMPACTIONS)  # type: ignore[untyped-decorator]
def sweep_compactions() -> dict[str, Any]:
    from store.compaction_service import sweep

    settings = get_settings()
    return sweep(
        settings=settings, enqueue=lambda cid, jid: enqueue_compaction(cid, jid, settings=settings)
    )
