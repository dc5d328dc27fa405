"""Generated agent sessions with seeded facts, for `bench/compaction_quality.py`.

A session is a run of an AI agent on a coding or ops task: a goal with subtasks, tool
calls and their outputs (file reads with code, test logs, listings, JSON), reasoning,
a few user turns. Facts are seeded at random turns and each has a needle that must be
found in a compacted context:

- `goal`, `open subtask`: stated in the first user message and set in the memory citing it
  (as `PUT …/memory/goal` with `seqs` does);
- `decision`: an assistant message of kind `decision` (the memory records it) or one the
  agent says and records with a rationale through the memory, citing that message (as
  `POST …/memory/decisions` with `seqs` does);
- `recurring error`: one error pattern seen 4 times with other numbers each time;
- `pinned`: a pinned user message;
- `file path`, `number`, `error message`: written once, in a tool call, a reasoning
  sentence, a tool output line or a traceback.

Five domains (vocabularies, file trees, errors, units) and three tool-output styles
(SWE-agent markup, plain text, JSON) vary the sessions; no two share a template set.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from bench.agent_domains import DOMAINS, FILLER, NAME_WORDS, SPECIFIC, USER_NUDGES, Domain
from contextq.history import HierarchicalMemory, Message, count_message_tokens

MODEL = "gpt-4o"


@dataclass
class Fact:
    kind: str  # goal | open subtask | decision | recurring error | pinned | file path | …
    needle: str
    regex: bool = False


@dataclass
class Session:
    domain: str
    style: str
    messages: list[Message]
    memory: HierarchicalMemory  # as it stands at the end
    facts: list[Fact] = field(default_factory=list)
    # memory writes made through its API (goal, subtask done, decision), after message seq
    writes: list[tuple[int, str, tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    def replay(self, memory: HierarchicalMemory, first_seq: int, last_seq: int) -> list[Message]:
        """Feed `memory` the messages with first_seq <= seq <= last_seq and the API writes
        made among them, in order, as the service does; returns those messages."""
        fed = []
        writes = sorted(self.writes, key=lambda w: w[0])
        for message in self.messages:
            if first_seq <= message.seq <= last_seq:
                memory.observe(message)
                fed.append(message)
                for seq, op, args, kwargs in writes:
                    if seq == message.seq:
                        getattr(memory, op)(*args, **kwargs)
        return fed


class _Builder:
    def __init__(self, domain: Domain, style: str, seed: int) -> None:
        self.d, self.style, self.rng = domain, style, random.Random(seed)
        self.messages: list[Message] = []
        self.memory = HierarchicalMemory()
        self.facts: list[Fact] = []
        self.used: set[str] = set()
        self.writes: list[tuple[int, str, tuple[Any, ...], dict[str, Any]]] = []

    def write(self, op: str, *args: Any, **kwargs: Any) -> None:
        """A memory write through its API (as the routes make them)."""
        getattr(self.memory, op)(*args, **kwargs)
        self.writes.append((self.messages[-1].seq, op, args, kwargs))

    def unique(self, low: int, high: int) -> str:
        while True:
            value = str(self.rng.randint(low, high))
            if value not in self.used:
                self.used.add(value)
                return value

    def add(self, role: str, content: str | None = None, **fields: object) -> Message:
        message = Message(
            role=role,  # type: ignore[arg-type]
            content=content,
            seq=len(self.messages),
            id=f"m{len(self.messages)}",
            **fields,  # type: ignore[arg-type]
        )
        message.token_count = count_message_tokens(message, MODEL)
        self.messages.append(message)
        self.memory.observe(message)
        return message

    def path(self) -> str:
        words = [*NAME_WORDS, *(n.split()[0] for n in self.d.nouns)]
        name = "_".join(self.rng.sample(words, 2))
        if self.rng.random() < 0.3:
            name += f"_{self.rng.randint(2, 999)}"
        return f"{self.rng.choice(self.d.dirs)}/{name}.{self.d.ext}"

    def specific(self) -> str:
        """A routine sentence with numbers, paths and identifiers (not a seeded fact)."""
        noun = self.rng.choice(self.d.nouns)
        return self.rng.choice(SPECIFIC).format(
            a=self.rng.randint(2, 900),
            b=self.rng.randint(2, 9),
            c=self.unique(10_000, 999_999),
            n=noun,
            w=noun.split()[0],
            p=self.path(),
            q=self.path(),
        )

    def output(self, body: str, code: int = 0) -> str:
        if self.style == "swe":
            return f"<returncode>{code}</returncode>\n<output>\n{body}\n</output>"
        if self.style == "json":
            return json.dumps({"exit_code": code, "stdout": body}, indent=1)
        return body if not code else f"{body}\n(exit status {code})"

    def call(self, tool: str, text: str = "", **arguments: object) -> str:
        call_id = f"call_{len(self.messages)}"
        calls = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
        ]
        self.add("assistant", text or None, tool_calls=calls, kind="tool_call")
        return call_id

    def code(self, lines: int) -> str:
        noun = self.rng.choice(self.d.nouns).replace(" ", "_")
        return "\n".join(
            f"    def {noun}_{i}(self, value):\n        return self._{noun}.get(value, {i})"
            for i in range(lines // 2)
        )

    # ------------------------------------------------------------ routine turns

    def routine(self) -> None:
        """A step that seeds nothing; edits and measurements read exactly as the seeded
        ones do, so a summariser cannot tell a fact by its wording."""
        kind = self.rng.choices(
            ("read", "test", "ls", "grep", "think", "user", "edit", "measure"),
            (5, 2, 1, 2, 2, 1, 2, 2),
        )[0]
        noun, other = self.rng.sample(self.d.nouns, 2)
        path = self.path()
        text = self.rng.choice(FILLER).format(n=noun, m=other, p=path)
        if kind == "read":
            said = self.rng.choice((text, self.specific(), ""))
            call_id = self.call("read_file", said, path=path)
            self.add("tool", self.output(self.code(self.rng.randint(30, 80))), tool_call_id=call_id)
        elif kind == "test":
            call_id = self.call("bash", text, command=self.d.test_cmd)
            passed = self.rng.randint(12, 90)
            log = "\n".join(f"{self.path()} ...... ok" for _ in range(6)) + f"\n{self.specific()}"
            took = f"{self.rng.randint(2, 40)}.{self.rng.randint(0, 9)}s"
            body = f"{log}\n{passed} passed, 0 failed in {took}"
            self.add("tool", self.output(body), tool_call_id=call_id)
        elif kind == "ls":
            folder = self.rng.choice(self.d.dirs)
            call_id = self.call("bash", "", command=f"ls {folder}")
            names = sorted({self.path().rsplit("/", 1)[1] for _ in range(10)})
            self.add("tool", self.output("\n".join(names)), tool_call_id=call_id)
        elif kind == "grep":
            call_id = self.call("bash", text, command=f"grep -rn {noun.split()[0]} .")
            hits = "\n".join(
                f"{self.path()}:{self.rng.randint(1, 400)}:    {noun.replace(' ', '_')} = load()"
                for _ in range(self.rng.randint(3, 12))
            )
            self.add("tool", self.output(hits), tool_call_id=call_id)
        elif kind == "think":
            self.add("assistant", f"{text} {self.specific()}")
        elif kind == "edit":
            self.edit(self.edited_path())
        elif kind == "measure":
            self.measure(self.unique(10_000, 999_999))
        else:
            self.add("user", self.rng.choice(USER_NUDGES))

    def edited_path(self) -> str:
        words = self.rng.sample(("ledger", "rules", "state", "export", "limits", "cache"), 2)
        return (
            f"{self.rng.choice(self.d.dirs)}/{'_'.join(words)}_{self.unique(100, 999)}.{self.d.ext}"
        )

    def edit(self, path: str) -> None:
        noun = self.rng.choice(self.d.nouns)
        call_id = self.call("edit_file", f"Editing {path} to fix the {noun}.", path=path)
        wrote = f"Wrote {self.rng.randint(3, 40)} lines."
        self.add("tool", self.output(wrote), tool_call_id=call_id)

    def measure(self, value: str) -> None:
        carriers = [t for t in (*self.d.measures, *SPECIFIC) if "{v}" in t or "{c}" in t]
        template = self.rng.choice(carriers)
        noun = self.rng.choice(self.d.nouns)
        measure = template.format(
            v=value,
            c=value,
            a=self.rng.randint(2, 900),
            b=self.rng.randint(2, 9),
            n=noun,
            w=noun.split()[0],
            p=self.path(),
            q=self.path(),
        ).rstrip(".")
        where = self.rng.choice(("reasoning", "tool", "user"))
        if where == "reasoning":
            self.add("assistant", f"Measured it: {measure}.")
        elif where == "user":
            self.add("user", f"FYI, {measure}.")
        else:
            call_id = self.call("bash", "", command=f"./scripts/stats {self.d.name}")
            noise = "\n".join(f"step {i}: done" for i in range(self.rng.randint(2, 6)))
            line = f"{measure[0].upper()}{measure[1:]}."
            self.add("tool", self.output(f"{noise}\n{line}\nstep done"), tool_call_id=call_id)

    # ------------------------------------------------------------ seeded facts

    def path_fact(self) -> None:
        path = self.edited_path()
        self.edit(path)
        self.facts.append(Fact("file path", path))

    def number_fact(self) -> None:
        value = self.unique(10_000, 999_999)
        self.measure(value)
        self.facts.append(Fact("number", value))

    def error_fact(self) -> None:
        message = self.rng.choice(self.d.errors).format(x=self.unique(1000, 9999))
        call_id = self.call("bash", "Running the failing case again.", command=self.d.test_cmd)
        if self.d.ext == "py" or self.rng.random() < 0.5:
            site = "/opt/venv/lib/python3.11/site-packages"
            frames = "".join(
                f'  File "{site}/lib{i}/core.py", line {i * 7 + 3}, in run\n'
                f"    return self.step(value)\n"
                for i in range(self.rng.randint(5, 40))
            )
            inner = f'  File "{self.path()}", line 88, in apply\n    total += row\n'
            body = f"Traceback (most recent call last):\n{frames}{inner}{message}"
        else:
            body = f"running {self.d.test_cmd}\n{message}"
        self.add("tool", self.output(body, code=1), tool_call_id=call_id)
        self.facts.append(Fact("error message", message))

    def recurring_error(self) -> None:
        message = self.d.recurring.format(a=self.rng.randint(100, 999), b=self.rng.randint(2, 99))
        call_id = self.call("bash", "", command=self.d.test_cmd)
        self.add("tool", self.output(message, code=1), tool_call_id=call_id, kind="error")

    def decision_message(self, decision: str, rationale: str) -> None:
        self.add("assistant", f"{decision}, because {rationale}.", kind="decision")
        self.facts.append(Fact("decision", decision))

    def pinned(self, fact: str) -> None:
        self.add("user", f"Remember: {fact}", pinned=True)
        self.facts.append(Fact("pinned", fact))


def _recurring_needle(template: str) -> str:
    import re

    parts = re.split(r"\{[ab]\}", template)
    return r"(?:\d+|N)".join(re.escape(p) for p in parts)  # as written, or as a pattern


def generate(domain: Domain, style: str, seed: int, turns: int = 300) -> Session:
    """One session of `turns` agent steps (a step: a reasoning message, or a tool call with
    its output, or a user turn) with its facts seeded at random steps."""
    b = _Builder(domain, style, seed)
    rng = b.rng
    b.add("system", "You are a careful software agent. Use the tools to work in the repository.")
    subtasks = list(domain.subtasks)
    task = b.add("user", f"Task: {domain.goal}. Plan: {'; '.join(subtasks)}.", kind="user_prompt")
    b.write("set_goal", domain.goal, subtasks, seqs=(task.seq,))
    b.facts.append(Fact("goal", domain.goal))
    seeds: list[tuple[str, object]] = [("path", None)] * 12 + [("number", None)] * 12
    seeds += [("error", None)] * 6 + [("recurring", None)] * 4
    seeds += [("decision", d) for d in domain.decisions]
    seeds += [
        ("pinned", domain.pinned[0]),
        ("pinned", f"the {domain.name} owner is on call as @{domain.name}-oncall-{seed}"),
    ]
    seeds += [("complete", subtasks[0]), ("complete", subtasks[1])]
    seeds += [("api decision", None)] * 2
    steps = sorted(rng.sample(range(3, turns - 8), len(seeds)))
    rng.shuffle(seeds)
    plan = dict(zip(steps, seeds, strict=True))
    for step in range(turns):
        what, arg = plan.get(step, ("routine", None))
        if what == "routine":
            b.routine()
        elif what == "path":
            b.path_fact()
        elif what == "number":
            b.number_fact()
        elif what == "error":
            b.error_fact()
        elif what == "recurring":
            b.recurring_error()
        elif what == "decision":
            b.decision_message(*arg)  # type: ignore[misc]
        elif what == "pinned":
            b.pinned(str(arg))
        elif what == "complete":
            b.write("complete_subtask", str(arg))
        elif what == "api decision":
            noun = rng.choice(domain.nouns)
            text = f"Rename the {noun} helpers to {noun.replace(' ', '_')}_v{b.unique(10, 99)}"
            why = "the old names clash with the new module"
            said = b.add("assistant", f"{text}: {why}.")
            b.write("add_decision", text, why, "low", seqs=(said.seq,))
            b.facts.append(Fact("decision", text))
    for name in subtasks[2:]:
        b.facts.append(Fact("open subtask", name))
    b.facts.append(Fact("recurring error", _recurring_needle(domain.recurring), regex=True))
    return Session(domain.name, style, b.messages, b.memory, b.facts, b.writes)


def sessions(count: int, turns: int = 300, seed: int = 0) -> list[Session]:
    styles = ("swe", "plain", "json")
    return [
        generate(DOMAINS[i % len(DOMAINS)], styles[i % len(styles)], seed + i, turns)
        for i in range(count)
    ]
