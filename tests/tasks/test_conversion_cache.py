"""The DB + blob conversion cache with its Redis lock, against a real Valkey."""

from __future__ import annotations

import signal
import subprocess
import sys
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


def test_a_live_holder_keeps_the_lock_past_its_time_to_live(stack) -> None:
    """The holder renews its lock while it converts: a conversion longer than the lock's
    time to live still runs alone."""
    holder, waiter = _cache(lock_timeout_s=0.6), _cache(lock_timeout_s=0.6, wait_timeout_s=10)
    got_at: list[float] = []
    with holder.lock("long-conversion"):
        started = time.monotonic()
        t = threading.Thread(target=_take, args=(waiter, "long-conversion", got_at))
        t.start()
        time.sleep(2.0)  # over three times the time to live
        held_for = time.monotonic() - started
    t.join()
    assert got_at and got_at[0] - started >= held_for - 0.05


def test_a_killed_holder_frees_the_lock_within_its_time_to_live(stack) -> None:
    """A worker SIGKILLed while converting (issue 20's dead host) no longer blocks the
    next conversion of the same content for the whole task time limit: its lock, no
    longer renewed, goes within the time to live and the waiter converts."""
    url = get_settings().REDIS_URL
    code = (
        "import sys, time\n"
        "from store.conversion_cache import DbConversionCache\n"
        f"c = DbConversionCache(blobs=None, redis_url={url!r},\n"
        "                      lock_timeout_s=1.5, wait_timeout_s=5)\n"
        "with c.lock('killed-holder'):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        time.sleep(2.0)  # renewed past its time to live while the holder lives
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        killed_at = time.monotonic()
        got_at: list[float] = []
        _take(_cache(lock_timeout_s=1.5, wait_timeout_s=30), "killed-holder", got_at)
        assert got_at and got_at[0] - killed_at < 3.0, got_at[0] - killed_at
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def _take(cache: DbConversionCache, key: str, got_at: list[float]) -> None:
    with cache.lock(key):
        got_at.append(time.monotonic())


def test_the_workers_cache_frees_a_dead_holders_lock_before_the_time_limit(stack) -> None:
    """What the worker configures: a dead holder's lock goes long before a waiter's task
    hits its soft time limit, and a waiter gives up with half of that limit left (it
    used to wait the whole limit and end the recovered file `failed`)."""
    from service.files.conversion import conversion_cache

    s = get_settings()
    cache = conversion_cache(s, get_blob_store(s))
    assert cache.lock_timeout_s <= 30 < s.TASK_SOFT_TIME_LIMIT_S
    assert cache.wait_timeout_s <= s.TASK_SOFT_TIME_LIMIT_S / 2


def test_an_unreachable_database_is_a_miss_and_nothing_stored(stack, monkeypatch, caplog) -> None:
    """A document converted while the database is away is not failed for its cache: the
    read is a miss and the store is skipped (the result write waits the outage out)."""
    from tests.support.procs import free_port
    from tests.support.stack import reset_process_state

    cache = _cache()
    cache.put("k3", "stored before the outage")
    nothing_listens = f"postgresql+psycopg://contextq@127.0.0.1:{free_port()}/contextq"
    monkeypatch.setenv("DATABASE_URL", nothing_listens)
    reset_process_state()
    with caplog.at_level("WARNING", logger="store.conversion_cache"):
        assert cache.get("k3") is None
        cache.put("k4", "converted during the outage")
    assert "not read, database unavailable" in caplog.text
    assert "not stored, database unavailable" in caplog.text
