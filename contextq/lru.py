"""A thread-safe least-recently-used map bounded by a total weight (one per item unless
`weigh` says otherwise): the process-wide caches of the context read share it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _one(_value: object) -> int:
    return 1


class LRU(Generic[K, V]):
    """key → value, least recently used out first once the weights pass `capacity`. A
    value heavier than the whole capacity is not kept."""

    def __init__(self, capacity: int, weigh: Callable[[V], int] = _one) -> None:
        self.capacity = capacity
        self._weigh = weigh
        self._items: OrderedDict[K, V] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        weight = self._weigh(value)
        if weight > self.capacity:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= self._weigh(old)
            self._items[key] = value
            self._weight += weight
            while self._weight > self.capacity:
                _, evicted = self._items.popitem(last=False)
                self._weight -= self._weigh(evicted)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0
