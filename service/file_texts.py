"""The processed texts of ready files, by file id, held in this process.

A ready file's processed text never changes, so a context read (`service.history.
context_files`) and a project's documents (`service.projects`) both read it through
this one cache: each module imports it from here, neither from the other.
"""

from __future__ import annotations

from contextq.lru import LRU

# processed texts by file id (≤ MAX_TOTAL_OUTPUT each), bounded by the characters held
TEXTS: LRU[str, str] = LRU(64_000_000, weigh=len)
