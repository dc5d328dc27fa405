"""What the broker knows about the queue and the workers: queue depths and heartbeats.

- Queue depth: kombu's Redis transport keeps each queue as Redis lists (one per
  priority step: `files`, `files\\x06\\x163`, …) and the messages delivered but not yet
  acknowledged in the `unacked` hash; their lengths are read in one pipeline.
- Live workers: each worker's main process records its Celery heartbeat (every 2 s)
  in the sorted set `contextq:workers` (member: node name, score: time), and removes
  itself on a clean shutdown. A worker is live while its last heartbeat is younger than
  LIVE_WINDOW_S; the newest score says when any worker was last seen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from store.redis_clients import redis_client

WORKERS_KEY = "contextq:workers"
LIVE_WINDOW_S = 10.0  # five missed heartbeats
FORGET_AFTER_S = 7 * 24 * 3600  # entries of workers gone this long are dropped
# kombu.transport.redis: the separator and the priority steps of a queue's lists
PRIORITY_SEP = "\x06\x16"
PRIORITY_STEPS = (0, 3, 6, 9)
UNACKED_KEY = "unacked"


def queue_keys(queue: str) -> list[str]:
    return [queue if step == 0 else f"{queue}{PRIORITY_SEP}{step}" for step in PRIORITY_STEPS]


def queue_depths(url: str, queues: tuple[str, ...]) -> tuple[dict[str, int], int]:
    """({queue: messages waiting}, messages delivered and not yet acknowledged)."""
    client = redis_client(url, timeout_s=2.0)
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        for key in queue_keys(queue):
            pipe.llen(key)
    pipe.hlen(UNACKED_KEY)
    replies = pipe.execute()
    steps = len(PRIORITY_STEPS)
    depths = {q: int(sum(replies[i * steps : (i + 1) * steps])) for i, q in enumerate(queues)}
    return depths, int(replies[-1])


def record_heartbeat(url: str, node: str, *, now: float | None = None) -> None:
    now = time.time() if now is None else now
    pipe = redis_client(url, timeout_s=1.0).pipeline(transaction=False)
    pipe.zadd(WORKERS_KEY, {node: now})
    pipe.zremrangebyscore(WORKERS_KEY, "-inf", now - FORGET_AFTER_S)
    pipe.execute()


def forget_worker(url: str, node: str) -> None:
    redis_client(url, timeout_s=1.0).zrem(WORKERS_KEY, node)


@dataclass(frozen=True)
class Workers:
    live: int
    last_seen: float | None  # unix time of the newest heartbeat of any worker


def workers(url: str, *, now: float | None = None) -> Workers:
    now = time.time() if now is None else now
    pipe = redis_client(url, timeout_s=1.0).pipeline(transaction=False)
    pipe.zcount(WORKERS_KEY, now - LIVE_WINDOW_S, "+inf")
    pipe.zrevrange(WORKERS_KEY, 0, 0, withscores=True)
    live, newest = pipe.execute()
    return Workers(int(live), float(newest[0][1]) if newest else None)
