"""The history of a generated case: messages in seq order with their markers, tool
rounds with their results (some oversized), files on user messages, pinned messages
anywhere, and the turns appended between reads."""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from contextq.catalog import resolve_model
from contextq.history import Message
from contextq.settings import Settings
from tests.engine.assembly.harness.files import make_file
from tests.engine.assembly.harness.text import marker, sized_tokens, text_of

if TYPE_CHECKING:
    from tests.engine.assembly.harness.cases import Case

MAX_PINNED = 10  # MAX_PINNED_MESSAGES (docs/configuration.md): the service refuses more
SEARCH_TOOL = "search"


@lru_cache(maxsize=1)
def _settings() -> Settings:
    return Settings()  # read once: building one reads the environment (tens of ms)


@lru_cache(maxsize=1024)  # every (model, window) the generators draw
def effective_window(model: str, cap: int) -> int:
    """The model's window under a MAX_CONTEXT_TOKENS cap."""
    return min(cap, resolve_model(model, _settings()).context_window)


class History:
    """Builds messages in seq order (ids `m<seq>`, markers `[#m<seq>]`)."""

    def __init__(self, rng: random.Random, case: Case, size: int, start_seq: int = 0) -> None:
        self.rng = rng
        self.case = case
        self.size = size  # the tokens a message may take at most
        self.seq = start_seq
        self.out: list[Message] = []
        self.tokens = 0  # about: a quarter of the characters

    def _add(self, role: str, content: str | None, **kw: Any) -> Message:
        self.seq += 1
        text = None if content is None else marker(self.seq) + content
        message = Message(role=role, content=text, seq=self.seq, id=f"m{self.seq}", **kw)  # type: ignore[arg-type]
        self.out.append(message)
        self.tokens += len(text or "") // 4
        return message

    def text(self, upper: int, kind: str = "prose") -> str:
        return text_of(self.rng, sized_tokens(self.rng, max(4, min(upper, self.size))), kind)

    def user(self, upper: int = 400, files: int = 0, pinned: bool = False) -> Message:
        message = self._add("user", self.text(upper), pinned=pinned)
        message.file_ids = self.attach(files)
        return message

    def attach(self, count: int) -> list[str]:
        ids = []
        audio = self.case.model == "gpt-4o-audio-preview" or self.rng.random() < 0.2
        for _ in range(count):
            file_id = f"f{len(self.case.files) + 1}"
            self.case.files[file_id] = make_file(
                self.rng, file_id, max_tokens=max(16, min(4000, self.size)), audio=audio
            )
            ids.append(file_id)
        return ids

    def assistant(self, upper: int = 300) -> Message:
        return self._add("assistant", self.text(upper))

    def system(self) -> Message:
        return self._add("system", "Operator note: " + self.text(120))

    def tool_round(self, calls: int, *, pinned: bool = False, search: bool = False) -> None:
        """An assistant message calling `calls` tools, and their results."""
        names = [
            SEARCH_TOOL if search and j == 0 else self.rng.choice(("bash", "read_file"))
            for j in range(calls)
        ]
        ids = [f"call_{self.seq + 1}_{j}" for j in range(calls)]
        tool_calls = [
            {
                "id": i,
                "type": "function",
                "function": {"name": n, "arguments": json.dumps({"cmd": self.text(12)})},
            }
            for i, n in zip(ids, names, strict=True)
        ]
        content = self.text(60) if self.rng.random() < 0.4 else None
        self._add("assistant", content, tool_calls=tool_calls, kind="tool_call", pinned=pinned)
        for call_id in ids:
            self._add(
                "tool",
                self._result_text(),
                tool_call_id=call_id,
                kind="error" if self.rng.random() < 0.08 else "observation",
            )

    def _result_text(self) -> str:
        """Prose, code or JSON; multi-line results are kept smaller: the engine sniffs a
        cleared or offloaded result's format with `csv.Sniffer`, which costs up to 0.2 s
        on 5 000 tokens of JSON (FINDINGS.md), and 10 000 cases must run in minutes."""
        roll = self.rng.random()
        kind = self.rng.choices(("prose", "code", "json"), weights=(6, 3, 1))[0]
        if roll < 0.05:  # oversized: over TOOL_RESULT_OFFLOAD_TOKENS, a preview in the context
            return text_of(self.rng, self.rng.randrange(2_100, 6_000), "prose")
        if roll < 0.15:
            return "ok"
        return self.text(1_500 if kind == "prose" else 300, kind)


def _shape_turn(h: History, shape: str, *, files: int, pinned: bool, last: bool) -> None:
    """One turn: a user message, tool rounds (tool shapes), and an answer unless `last`
    leaves the turn open."""
    rng = h.rng
    h.user(files=files, pinned=pinned)
    rounds = 0 if shape == "chat" else rng.randrange(0, 6 if shape == "tool" else 3)
    for _ in range(rounds):
        h.tool_round(rng.choice((1, 1, 1, 2, 3)), search=rng.random() < 0.1)
    if not last or rng.random() < 0.4:
        h.assistant()


def build_history(rng: random.Random, case: Case, target: int) -> list[Message]:
    """About `target` tokens of history in the case's shape, ending on an open turn."""
    shape = rng.choice(("chat", "tool", "tool", "mixed"))
    h = History(rng, case, size=max(64, target // 3))
    if rng.random() < 0.12:
        h.system()
    first_pinned = rng.random() < 0.35
    if rng.random() < 0.1:  # a huge first task (an agent's task, often pinned)
        h._add("user", text_of(rng, int(target * rng.uniform(0.2, 0.9))), pinned=first_pinned)
        h.out[-1].file_ids = h.attach(rng.choice((0, 0, 2)))
    else:
        h.user(files=rng.choice((0, 0, 1, 3)), pinned=first_pinned)
    while h.tokens < target:
        _shape_turn(h, shape, files=_files(rng), pinned=rng.random() < 0.05, last=False)
        if rng.random() < 0.03:
            h.system()
        if len(h.out) > 600:
            break
    newest_pinned = rng.random() < 0.15
    _shape_turn(h, shape, files=_files(rng, newest=True), pinned=newest_pinned, last=True)
    _pin_some(rng, h.out)
    return h.out


def _files(rng: random.Random, newest: bool = False) -> int:
    if rng.random() < (0.45 if newest else 0.15):
        return rng.randrange(1, 11 if newest else 4)
    return 0


def _pin_some(rng: random.Random, messages: list[Message]) -> None:
    """Pin a few more messages anywhere (a tool result pins its chain), at most 10."""
    for _ in range(rng.choice((0, 0, 1, 2, 4))):
        rng.choice(messages).pinned = True
    pinned = [m for m in messages if m.pinned]
    for m in pinned[: max(0, len(pinned) - MAX_PINNED)]:
        m.pinned = False


def next_turn(rng: random.Random, case: Case, after: list[Message]) -> list[Message]:
    """What an agent or a user appends before the next read: a tool round in the open
    turn, or an answer and a new user message (maybe pinned, maybe with files)."""
    size = max(64, min(effective_window(case.model, case.window) // 4, 3_000))
    h = History(rng, case, size=size, start_seq=after[-1].seq)
    last = after[-1]
    if rng.random() < 0.5 and last.role in ("user", "tool"):
        h.tool_round(rng.choice((1, 2)), search=rng.random() < 0.15)
        return h.out
    if last.role != "assistant" or last.tool_calls:
        h.assistant()
    h.user(files=_files(rng, newest=True), pinned=rng.random() < 0.05)
    return h.out
