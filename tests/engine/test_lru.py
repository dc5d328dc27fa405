"""The shared bounded LRU of the context read's caches."""

from __future__ import annotations

from contextq.lru import LRU


def test_least_recently_used_goes_first_when_the_items_pass_capacity() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (1, 3)


def test_weights_bound_the_total_and_a_value_over_capacity_is_not_kept() -> None:
    cache: LRU[str, str] = LRU(10, weigh=len)
    cache.put("x", "12345")
    cache.put("y", "123456")  # 11 > 10: x goes
    assert cache.get("x") is None and cache.get("y") == "123456"
    cache.put("z", "12345678901")  # heavier than the whole cache
    assert cache.get("z") is None and cache.get("y") == "123456"


def test_replacing_a_key_counts_its_weight_once() -> None:
    cache: LRU[str, str] = LRU(10, weigh=len)
    cache.put("x", "12345")
    cache.put("x", "123456789")
    cache.put("y", "1")
    assert (cache.get("x"), cache.get("y")) == ("123456789", "1")
    cache.clear()
    assert cache.get("x") is None
