"""One answer as the invariants see it: the read, what was sent, the recount and the
limits, the visible history and its pinned messages, each derived once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from contextq.history import Message
from contextq.history.chains import unit_at
from contextq.history.context import visible_history
from tests.engine.assembly.harness.canonical import FIELDS, Canonical, Prefixed
from tests.engine.assembly.harness.engine import Read
from tests.engine.assembly.harness.oracle import Limits, limits, recount
from tests.engine.assembly.harness.reasoning import (
    Walked,
    anthropic_loop_rows,
    nodes_of,
    owned_groups,
    walk,
)
from tests.engine.assembly.harness.sent import Sent, gemini_field, read_sent, text_of

if TYPE_CHECKING:
    from tests.engine.assembly.harness.binding_checks import BindingState


@dataclass
class Facts:
    """One answer, with what the invariants derive from it (each derived once)."""

    read: Read
    previous: Read | None = None
    binding: BindingState | None = None  # a bound trajectory's oracle (binding_checks)

    @property
    def answer(self) -> dict[str, Any]:
        return self.read.answer

    @cached_property
    def sent(self) -> Sent:
        return read_sent(self.answer, self.read.history)

    @cached_property
    def groups(self) -> list[list[tuple[int, Any]]]:
        """The answer's assistant turns, each node with the seq of the row it comes from."""
        return owned_groups(self.answer, self.read.history)

    @cached_property
    def owned(self) -> dict[int, list[Any]]:
        """The answer's assistant-side nodes by the seq of the row they come from."""
        out: dict[int, list[Any]] = {}
        for group in self.groups:
            for seq, node in group:
                out.setdefault(seq, []).append(node)
        return out

    @cached_property
    def walked(self) -> dict[int, Walked]:
        """Each sent assistant row of the answer's vendor: its nodes against its payload."""
        fmt = self.answer["format"]
        out = {}
        for m in self.visible:
            if m.role == "assistant" and self.own_vendor(m) and m.native is not None:
                sent = self.owned.get(m.seq)
                if sent:
                    out[m.seq] = walk(fmt, nodes_of(fmt, m.native.payload), sent)
        return out

    @cached_property
    def loop_seq(self) -> int:
        """Where the current tool loop starts, whose reasoning is always sent: the newest
        user message (docs/context.md#reasoning-state); in format=anthropic, when the answer ends on
        a turn of tool results, the latest assistant turn too (the API checks its thinking:
        `reasoning.anthropic_loop_rows`); when the newest user message is not sent, the
        loop the list ends on (`_sent_loop`)."""
        return min([self.newest_user_seq, *self._anthropic_loop[0], *self._sent_loop])

    @cached_property
    def _sent_loop(self) -> list[int]:
        """When the newest user message is not sent (only pinned messages fit), the list
        ends on an older loop, which the vendor validates as the current one: from the
        newest user message the answer holds (none: the whole list)."""
        u = newest_user(self.read.history)
        if u is None or self.present(u):
            return []
        users = [m.seq for m in self.visible if m.role == "user" and self.present(m)]
        return [users[-1] if users else 0]

    @cached_property
    def cut_in_sent_loop(self) -> set[int]:
        """The rows of that older loop already cut to a preview for lack of room: they
        stay as cut, without their reasoning, counted as an earlier turn's."""
        if not self._sent_loop:
            return set()
        newest = self.newest_user_seq
        return {
            m.seq
            for m in self.visible
            if self._sent_loop[0] <= m.seq < newest and self.present(m) and not self.verbatim(m)
        }

    @cached_property
    def loop_may_seq(self) -> int:
        """Where reasoning a target that strips earlier turns' may still be sent: the
        loop as Anthropic reads an answer ending on tool results (every assistant turn
        since its last user turn holding no result), else `loop_seq`."""
        return min([self.loop_seq, *self._anthropic_loop[1]])

    @cached_property
    def newest_user_seq(self) -> int:
        u = newest_user(self.read.history)
        return u.seq if u is not None else 0

    @cached_property
    def _anthropic_loop(self) -> tuple[set[int], set[int]]:
        if self.answer["format"] != "anthropic":
            return set(), set()
        return anthropic_loop_rows(self.answer, self.groups)

    @cached_property
    def canonical(self) -> Canonical | None:
        """The answer's canonical prefixes (`canonical`; None in format=openai)."""
        return Canonical(self.answer) if self.answer["format"] in FIELDS else None

    @property
    def reasoning_prefixes(self) -> list[Prefixed]:
        """The answer's reasoning nodes with their canonical prefix hashes."""
        return self.canonical.prefixed if self.canonical is not None else []

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
        (with their chains): the pinned-alone case of docs/context.md#pinned-messages."""
        allowed = {m.seq for m in self.pinned} | {m.seq for m in self.visible if m.role == "system"}
        seqs = set(self.sent.texts)
        calls = {c for m in self.pinned for c in m.call_ids}
        extra_calls = set(self.sent.calls) - calls
        return bool(self.pinned) and seqs <= allowed and not extra_calls

    def present(self, m: Message) -> bool:
        if m.role == "tool":
            return self.sent.result(m) is not None
        if m.tool_calls:
            return any(self.sent.called(c) for c in m.tool_calls)
        return m.seq in self.sent.texts

    def verbatim(self, m: Message) -> bool:
        if m.role == "tool":
            return self.sent.result(m) == self.whole_result(m)
        if m.tool_calls:
            return all(self.sent.called(c) for c in m.tool_calls) and (
                not m.text().strip() or self.sent.text(m.seq) == self.whole_text(m)
            )
        return self.sent.text(m.seq) == self.whole_text(m)

    def own_vendor(self, m: Message) -> bool:
        """Whether `m` is a native row of this answer's format (sent as stored)."""
        return m.native is not None and m.native.format == self.answer["format"]

    def whole_result(self, m: Message) -> str:
        """The text `sent` reads for tool result `m` sent whole: a Gemini row in its own
        format is its response's output (its text is the response's JSON)."""
        if self.own_vendor(m) and m.native is not None and m.native.format == "gemini":
            part = m.native.payload["parts"][0]
            made = gemini_field(part, "functionResponse").get("response") or {}
            return str(made.get("output", made.get("error", "")))
        return m.text()

    def whole_text(self, m: Message) -> str:
        """The first text `sent` reads for message `m` sent whole: a native row in its
        own format sends its text nodes apart (the first holds the marker)."""
        if not self.own_vendor(m) or m.native is None:
            return m.text()
        texts = native_texts(m.native.format, m.native.payload)
        return texts[0] if texts else m.text()


def newest_user(history: list[Message]) -> Message | None:
    for m in reversed(history):
        if m.role == "user":
            return m
    return None


def native_texts(fmt: str, payload: Any) -> list[str]:
    """A native slice's visible text nodes, in order (what a client reads as text)."""
    if fmt == "gemini":
        return [
            str(p["text"])
            for p in payload.get("parts") or ()
            if "text" in p and p.get("thought") is not True
        ]
    if fmt == "anthropic":
        content = payload.get("content")
        if isinstance(content, str):
            return [content]
        return [str(b["text"]) for b in content if b.get("type") == "text"]
    texts = []
    for item in payload:
        content = item.get("content") if item.get("type", "message") == "message" else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [
                text_of([p]) for p in content if p.get("type") in ("input_text", "output_text")
            ]
    return texts
