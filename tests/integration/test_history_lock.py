"""The per-conversation compaction lock on a real Valkey server (SET NX PX + token)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from contextq.settings import get_settings
from store.locks import COMPACTION_LOCK_PREFIX, compaction_lock

pytestmark = pytest.mark.integration


def test_one_holder_at_a_time_and_only_the_owner_releases(stack: Any) -> None:
    settings = get_settings()
    client = redis.Redis.from_url(stack.redis_url)
    key = COMPACTION_LOCK_PREFIX + "c1"
    with compaction_lock("c1", settings=settings) as first:
        assert first is True
        ttl_ms = client.pttl(key)
        assert 0 < ttl_ms <= (settings.TASK_TIME_LIMIT_S + 30) * 1000  # a dead holder frees it
        with compaction_lock("c1", settings=settings) as second:
            assert second is False  # the loser does nothing
        assert client.exists(key)  # and did not release the holder's lock
        with compaction_lock("c2", settings=settings) as other:
            assert other is True  # other conversations are independent
        # the lock expired and someone else took it: our exit must not delete theirs
        client.set(key, "someone-else")
    assert client.get(key) == b"someone-else"
    client.delete(key)
    with compaction_lock("c1", settings=settings) as again:
        assert again is True
    assert not client.exists(key)
    client.close()
