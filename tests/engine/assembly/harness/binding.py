"""Bound trajectories (docs/context.md#bound-reasoning, issue 27): tool loops on a model that
binds each reasoning block to the exact prefix it was written after, written one step
at a time by a simulated model that reads each answer first.

`draw_bound(case)` draws, from its own generator (`random.Random(seed * 4 + 3)`, after
the rest of the case: a seed keeps its history and its native turns), whether a case in
format `anthropic` or `responses` goes on with a bound trajectory after its last read,
and on which bound model (`contextq.reasoning_rules.rule_for(...).binds`: Claude Fable
5.1, Opus / Sonnet / Haiku 5.5, GPT-5.6, an unknown model). The run (`run.check_case`)
then reads the case as before and, for each step, hands the last answer to
`Trajectory.step`: the model's next step (thinking, maybe a text, one to three tool
calls, maybe thinking between them) and its results, posted in the vendor's own shape
through the real parser. Each reasoning node the model writes carries, as its signature
(Anthropic `thinking.signature` / `redacted_thinking.data`, Responses
`reasoning.encrypted_content`), the hash of the canonical prefix it was written after
(`canonical.hash_after`: the answer it read, plus its own step so far). `binding_checks`
judges every later answer against those hashes.

`BINDING_ORACLE` (env `CONTEXTQ_BINDING_ORACLE`, default on) decides whether a broken
binding invariant fails CI; with it off the trajectories and the checks still run and
report their counts, and the CI tests of the binding invariants xfail (test_harness.py).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from contextq.history import Message
from contextq.history.native import parse_native
from contextq.reasoning_rules import rule_for
from tests.engine.assembly.harness.canonical import hash_after, node_key
from tests.engine.assembly.harness.histories import effective_window
from tests.engine.assembly.harness.text import marker, sized_tokens, text_of
from tests.engine.assembly.harness.vendor_turns import reasoning_text

if TYPE_CHECKING:
    from tests.engine.assembly.harness.cases import Case

BINDING_ORACLE = os.environ.get("CONTEXTQ_BINDING_ORACLE", "1") != "0"
BOUND_SHARE = 0.3  # of the cases whose format is a bound vendor's (anthropic, responses)
# (model, weight) by format: every one binds (checked at import)
BOUND_MODELS: dict[str, tuple[tuple[str, float], ...]] = {
    "anthropic": (
        ("claude-fable-5-1", 3),
        ("claude-opus-5-5", 2),
        ("claude-sonnet-5-5", 2),
        ("claude-haiku-5-5", 1),
        ("acme-reasoner-2", 1),
    ),
    "responses": (("gpt-5.6", 3), ("gpt-5.6-mini", 1), ("acme-reasoner-2", 1)),
}
assert all(rule_for(m).binds for table in BOUND_MODELS.values() for m, _ in table)
MAX_STEPS = 10


@dataclass(frozen=True, slots=True)
class BoundSpec:
    """A bound trajectory as drawn: what `Trajectory` needs to write it again."""

    seed: int  # the trajectory's own generator
    model: str
    steps: int
    result_tokens: int  # a tool result's size at most (log-uniform below it)
    turn_share: float  # how often a step's results come with a new user message


def draw_bound(case: Case) -> BoundSpec | None:
    """Whether `case` goes on with a bound trajectory (the module), on which model; the
    case's model becomes it (only when its window is not smaller: the options were
    drawn for the case's)."""
    rng = random.Random(case.seed * 4 + 3)
    table = BOUND_MODELS.get(case.format)
    if table is None or rng.random() >= BOUND_SHARE:
        return None
    models, weights = zip(*table, strict=True)
    model = rng.choices(models, weights=weights)[0]
    usable = effective_window(case.model, case.window)
    if effective_window(model, case.window) < usable:
        return None
    share = rng.choice((40, 16, 8, 4))  # of the window, a result at most
    return BoundSpec(
        seed=rng.randrange(2**31),
        model=model,
        steps=rng.randrange(2, MAX_STEPS + 1),
        result_tokens=max(24, min(3_000, usable // share)),
        turn_share=rng.choice((0.0, 0.0, 0.1, 0.25)),
    )


@dataclass(slots=True)
class Written:
    """A reasoning node the simulated model wrote: its row and the hash of the prefix it
    was written after (its signature starts with it)."""

    seq: int
    k: int
    signature: str


@dataclass(slots=True)
class Trajectory:
    """Writes one bound trajectory step by step; remembers what it wrote."""

    spec: BoundSpec
    fmt: str
    tools: list[str]
    rng: random.Random = field(init=False)
    written: dict[str, Written] = field(default_factory=dict)  # node key -> what
    newest: list[str] = field(default_factory=list)  # the newest step's node keys
    newest_seq: int | None = None
    steps_done: int = 0
    read_by: dict[int, dict[str, Any]] = field(default_factory=dict)  # step seq -> answer

    def __post_init__(self) -> None:
        self.rng = random.Random(self.spec.seed)

    @classmethod
    def of(cls, case: Case) -> Trajectory | None:
        if case.bound is None or case.format not in BOUND_MODELS:
            return None  # (a shrunk case may have another format)
        names = [t["function"]["name"] for t in case.tools or () if "function" in t]
        return cls(case.bound, case.format, names or ["bash"])

    @staticmethod
    def ready(stored: list[Message]) -> bool:
        """Whether the model can go on after `stored` (no call of it left unanswered)."""
        return not stored or not stored[-1].tool_calls

    def opening(self, stored: list[Message]) -> list[Message] | None:
        """A user message to read first when the history's last message does not wait
        for the model (a final answer); None when the model can write after the last
        answer as it is."""
        last = stored[-1] if stored else None
        if last is not None and last.role in ("user", "tool"):
            return None
        seq = last.seq + 1 if last is not None else 1
        text = marker(seq) + "Next task: " + text_of(self.rng, sized_tokens(self.rng, 80))
        return [Message(role="user", content=text, seq=seq, id=f"m{seq}")]

    def step(self, answer: dict[str, Any], stored: list[Message]) -> list[Message]:
        """The model's next step after reading `answer`, with its results (and maybe a
        new user message), as the parser stores them (seqs after `stored`)."""
        seq = stored[-1].seq + 1 if stored else 1
        calls = self.rng.choice((1, 1, 1, 2, 3))
        self.newest, self.newest_seq = [], seq
        self.read_by[seq] = answer
        if self.fmt == "anthropic":
            items = self._anthropic(answer, seq, calls)
        else:
            items = self._responses(answer, seq, calls)
        rows = parse_native(self.fmt, items, model=self.spec.model)
        self.steps_done += 1
        return [replace(row, seq=seq + n, id=f"m{seq + n}") for n, row in enumerate(rows)]

    # ------------------------------------------------------------ what the model writes

    def _sign(self, node: dict[str, Any], key: str, value: str, seq: int, k: int) -> None:
        # the prefix hash, made unique by the node's place as a real signature is: two
        # steps written after the same answer (a pinned-only answer read twice) must not
        # write the same node, or the oracle would take one for the other
        node[key] = f"{value}.{seq}.{k}"
        name = node_key(node)
        self.written[name] = Written(seq, k, value)
        self.newest.append(name)

    def _thinking(self, answer: dict[str, Any], before: list[Any], seq: int, k: int) -> Any:
        signature = hash_after(answer, before)
        if k == 0 and self.rng.random() < 0.1:  # two would be the same block
            node: dict[str, Any] = {"type": "redacted_thinking"}
            self._sign(node, "data", signature, seq, k)
            return node
        shown = k > 0 or self.rng.random() < 0.7  # else display omitted: thinking ""
        text = reasoning_text(self.rng, "anthropic", seq, k) if shown else ""
        node = {"type": "thinking", "thinking": text}
        self._sign(node, "signature", signature, seq, k)
        return node

    def _anthropic(self, answer: dict[str, Any], seq: int, calls: int) -> list[Any]:
        blocks: list[Any] = []
        k = 0
        for _ in range(self.rng.choice((1, 1, 1, 2))):
            blocks.append(self._thinking(answer, blocks, seq, k))
            k += 1
        if self.rng.random() < 0.4:
            blocks.append({"type": "text", "text": marker(seq) + text_of(self.rng, 20)})
        for j in range(calls):
            if j and self.rng.random() < 0.3:
                blocks.append(self._thinking(answer, blocks, seq, k))
                k += 1
            name, arguments = self._call(seq, j)
            use = {"type": "tool_use", "id": f"call_{seq}_{j}", "name": name, "input": arguments}
            blocks.append(use)
        results: list[Any] = [
            {
                "type": "tool_result",
                "tool_use_id": f"call_{seq}_{j}",
                "content": marker(seq + 1 + j) + self._result(),
            }
            for j in range(calls)
        ]
        if self.rng.random() < self.spec.turn_share:
            words = marker(seq + 1 + calls) + "Then: " + text_of(self.rng, 30)
            results.append({"type": "text", "text": words})
        return [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]

    def _reasoning_item(self, answer: dict[str, Any], before: list[Any], seq: int, k: int) -> Any:
        summary = reasoning_text(self.rng, "responses", seq, k)
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": f"rs_{seq}x{k}",
            "summary": [{"type": "summary_text", "text": summary}],
        }
        self._sign(item, "encrypted_content", hash_after(answer, before), seq, k)
        return item

    def _responses(self, answer: dict[str, Any], seq: int, calls: int) -> list[Any]:
        items: list[Any] = [self._reasoning_item(answer, [], seq, 0)]
        k = 1
        if self.rng.random() < 0.4:
            text = marker(seq) + text_of(self.rng, 20)
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{seq}x{k}",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            )
            k += 1
        for j in range(calls):
            if j and self.rng.random() < 0.3:
                items.append(self._reasoning_item(answer, items, seq, k))
                k += 1
            name, arguments = self._call(seq, j)
            items.append(
                {
                    "type": "function_call",
                    "call_id": f"call_{seq}_{j}",
                    "name": name,
                    "arguments": json.dumps(arguments),
                    "id": f"fc_{seq}x{k}",
                    "status": "completed",
                }
            )
            k += 1
        out = [
            {
                "type": "function_call_output",
                "call_id": f"call_{seq}_{j}",
                "output": marker(seq + 1 + j) + self._result(),
            }
            for j in range(calls)
        ]
        if self.rng.random() < self.spec.turn_share:
            words = marker(seq + 1 + calls) + "Then: " + text_of(self.rng, 30)
            out.append({"role": "user", "content": words})
        return items + out

    def _call(self, seq: int, j: int) -> tuple[str, dict[str, Any]]:
        return self.rng.choice(self.tools), {"cmd": f"step {seq}.{j} " + text_of(self.rng, 6)}

    def _result(self) -> str:
        kind = self.rng.choices(("prose", "code", "json"), weights=(6, 3, 1))[0]
        size = sized_tokens(self.rng, self.spec.result_tokens if kind == "prose" else 300)
        return text_of(self.rng, size, kind)
