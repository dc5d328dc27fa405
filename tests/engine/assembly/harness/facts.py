"""One answer as the invariants see it: the read, what was sent, the recount and the
limits, the visible history and its pinned messages, each derived once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from contextq.history import Message
from contextq.history.chains import unit_at
from contextq.history.context import visible_history
from tests.engine.assembly.harness.engine import Read
from tests.engine.assembly.harness.oracle import Limits, Sent, limits, read_sent, recount


@dataclass
class Facts:
    """One answer, with what the invariants derive from it (each derived once)."""

    read: Read
    previous: Read | None = None

    @property
    def answer(self) -> dict[str, Any]:
        return self.read.answer

    @cached_property
    def sent(self) -> Sent:
        return read_sent(self.answer)

    @cached_property
    def recount(self) -> int:
        return recount(self.answer)

    @cached_property
    def limits(self) -> Limits:
        return limits(self.answer, self.read.case.options, self.read.settings)

    @cached_property
    def visible(self) -> list[Message]:
        """The history the engine had to account for (what a compaction does not cover)."""
        compaction = self.read.case.compaction
        through = compaction.through_seq if compaction is not None else None
        u = newest_user(self.read.history)
        return visible_history(self.read.history, through, [u.seq] if u is not None else [])

    @cached_property
    def pinned(self) -> list[Message]:
        """Pinned messages of the visible history with their chains, in seq order."""
        keep: dict[int, Message] = {}
        history = self.visible
        for i, m in enumerate(history):
            if m.pinned:
                for j in unit_at(history, i).members or (i,):
                    keep[history[j].seq] = history[j]
        return [keep[s] for s in sorted(keep)]

    @cached_property
    def pinned_only(self) -> bool:
        """The answer holds only S, the history's system messages and pinned messages
        (with their chains): SPEC §4's pinned-alone case."""
        allowed = {m.seq for m in self.pinned} | {m.seq for m in self.visible if m.role == "system"}
        seqs = set(self.sent.texts)
        calls = {c for m in self.pinned for c in m.call_ids}
        extra_calls = set(self.sent.calls) - calls
        return bool(self.pinned) and seqs <= allowed and not extra_calls

    def present(self, m: Message) -> bool:
        if m.role == "tool":
            return self.sent.result(m) is not None
        if m.tool_calls:
            return any(c in self.sent.calls for c in m.call_ids)
        return m.seq in self.sent.texts

    def verbatim(self, m: Message) -> bool:
        if m.role == "tool":
            return self.sent.result(m) == m.text()
        if m.tool_calls:
            return all(c in self.sent.calls for c in m.call_ids) and (
                not m.text().strip() or self.sent.text(m.seq) == m.text()
            )
        return self.sent.text(m.seq) == m.text()


def newest_user(history: list[Message]) -> Message | None:
    for m in reversed(history):
        if m.role == "user":
            return m
    return None
