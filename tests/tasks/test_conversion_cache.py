"""The DB + blob conversion cache with its Redis lock, against a real Valkey."""

from __future__ import annotations

import threading
import time

from contextq.settings import get_settings
from store.blobs import get_blob_store
from store.conversion_cache import DbConversionCache
from store.tables import ConversionCacheEntry
from tests.support.db import get_row


def _cache(**kw) -> DbConversionCache:
    s = get_settings()
    return DbConversionCache(
        blobs=get_blob_store(s),
        redis_url=s.REDIS_URL,
        lock_timeout_s=kw.get("lock_timeout_s", 30),
        wait_timeout_s=kw.get("wait_timeout_s", 30),
    )


def test_put_get_counts_hits(stack) -> None:
    cache = _cache()
    assert cache.get("k1") is None
    cache.put("k1", "# converted markdown")
    assert cache.get("k1") == "# converted markdown"
    assert cache.get("k1") == "# converted markdown"
    entry = get_row(ConversionCacheEntry, "k1")
    assert entry is not None and entry.hits == 2
    cache.put("k1", "# again")  # a second writer of the same key is harmless
    assert cache.get("k1") == "# again"


def test_missing_blob_is_a_miss(stack) -> None:
    cache = _cache()
    cache.put("k2", "text")
    get_blob_store().delete(get_row(ConversionCacheEntry, "k2").markdown_sha256)
    assert cache.get("k2") is None


def test_lock_lets_one_conversion_run_at_a_time(stack) -> None:
    inside, peak, conversions = [0], [0], []
    guard = threading.Lock()

    def convert() -> None:
        cache = _cache()  # like separate workers: separate cache objects, one Redis
        with cache.lock("same-key"):
            if cache.get("same-key") is None:
                with guard:
                    inside[0] += 1
                    peak[0] = max(peak[0], inside[0])
                time.sleep(0.2)
                conversions.append(1)
                cache.put("same-key", "done")
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=convert) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 1 and len(conversions) == 1


def test_lock_without_broker_still_converts(stack, make_stack) -> None:
    from tests.support.procs import free_port

    make_stack(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    cache = _cache()
    ran = []
    with cache.lock("k"):
        ran.append(1)
    assert ran == [1]
