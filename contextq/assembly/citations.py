"""Stable citation ids (docs/history.md#the-answer): stored per conversation; a document (a file, or
a project chunk) gets the next free number the first time a context answer cites it and
keeps it, so citations in earlier answers stay valid.

The engine takes the stored map (`source_key` → id, plus the highest id in use) and
returns the assignments it made; the service stores them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


def file_key(file_id: str) -> str:
    return f"file:{file_id}"


def chunk_key(chunk_id: str | int) -> str:
    return f"chunk:{chunk_id}"


@dataclass(slots=True)
class CitationMap:
    """Ids known so far; `provisional(key)` numbers unknown keys after the stored ones
    (for sizing a document before knowing whether it is sent), `assign(keys)` gives the
    keys actually sent their final ids: stored ones keep theirs, new ones get the next
    free numbers in the order given."""

    stored: Mapping[str, int] = field(default_factory=dict)
    highest: int = 0  # the highest id in use in the conversation (stored ones included)
    _provisional: dict[str, int] = field(default_factory=dict)
    assigned: dict[str, int] = field(default_factory=dict)  # new ones, after `assign`

    def __post_init__(self) -> None:
        self.highest = max([self.highest, *self.stored.values()], default=0)

    def provisional(self, key: str) -> int:
        found = self.stored.get(key)
        if found is not None:
            return found
        if key not in self._provisional:
            self._provisional[key] = self.highest + len(self._provisional) + 1
        return self._provisional[key]

    def assign(self, keys: Iterable[str]) -> dict[str, int]:
        """Final ids for `keys` (in order of appearance); new ones are in `assigned` (a
        second call starts afresh: the last call is what an answer sends)."""
        self.assigned = {}
        final: dict[str, int] = {}
        next_id = self.highest
        for key in keys:
            if key in final:
                continue
            found = self.stored.get(key)
            if found is None:
                next_id += 1
                found = next_id
                self.assigned[key] = found
            final[key] = found
        return final
