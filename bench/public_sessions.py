"""Agent sessions not written for this bench, for `bench/compaction_quality.py` (1p).

Source: the Berkeley Function Calling Leaderboard's multi-turn data (BFCL v4,
`multi_turn_long_context`: multi-step tool-use tasks over simulated file-system, trading,
travel, ticket, messaging, social and vehicle APIs), licensed Apache-2.0, shipped with
its simulated APIs in the `bfcl-eval` package on PyPI:

    .venv/bin/pip install --no-deps bfcl-eval==2026.3.23

(`--no-deps`: its data files and API classes need nothing else; its dependencies serve
its own model harness, not used here. Tasks on `MathAPI` need `mpmath` and are left out.)

A session is one agent working through the tasks of one API set in dataset order, each
task on a fresh environment loaded with its `initial_config`, until `turns` messages:
every user turn, then, for each of the task's ground-truth calls, an assistant tool call
and its result — the call executed against BFCL's own API class, so every output is what
that class returns (a failed call's `{"error": …}` result is marked `kind: "error"`, as an
integration reporting tool failures would). Nothing is generated for the bench.

Facts are sampled from the rebuilt sessions after the fact (a seeded random choice):
- goal: the first user turn, set in the memory citing it; open subtasks: the last two
  tasks' first requests (the earlier ones marked done as the agent moves on);
- pinned: one user turn, pinned;
- recurring error: an error pattern the session's results repeat 3 times or more;
- error message: an error result seen once or twice, as written;
- file path: a file name a call's arguments name (one with an extension);
- number: a value of 4+ digits (a price, an id, a count) that one short tool result
  (at most 600 characters: an answer, not the bulk records the long-context variant
  adds to listings) holds, seen once in the session.
There are no decisions in the data: that class has no facts here.
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
import random
import re
from collections import Counter, defaultdict
from typing import Any

from bench.agent_sessions import MODEL, Fact, Session
from contextq.history import HierarchicalMemory, Message, count_message_tokens
from contextq.history.memory_actions import normalise_error

VERSION = "2026.3.23"
INSTALL = f".venv/bin/pip install --no-deps bfcl-eval=={VERSION}"
DATA = "BFCL_v4_multi_turn_long_context.json"
LICENSE = "Apache-2.0"
_NUMBER = re.compile(r"(?<![\w.])\d{4,}(?:\.\d+)?(?![\w])")
SHORT_RESULT = 600
_FILE_ARGS = ("file_name", "source", "destination", "file_name1", "file_name2", "path")


def load(count: int, *, seed: int = 0, turns: int = 300) -> tuple[list[Session], str]:
    """`count` sessions and a line saying what they are (or why there are none)."""
    try:
        from importlib import resources

        data = resources.files("bfcl_eval") / "data"
        questions = _lines((data / DATA).read_text())
        answers = _lines((data / "possible_answer" / DATA).read_text())
    except (ImportError, FileNotFoundError) as exc:
        return [], f"skipped: bfcl-eval is not installed ({exc}); {INSTALL}"
    truth = {row["id"]: row["ground_truth"] for row in answers}
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in questions:
        if "MathAPI" not in row["involved_classes"] and row["id"] in truth:
            groups[tuple(sorted(row["involved_classes"]))].append(row)
    biggest = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))[:count]
    rng = random.Random(seed)
    runs = [_session(rows, truth, rng, turns) for _, rows in biggest]
    names = ", ".join("+".join(classes) for classes, _ in biggest)
    note = (
        f"{len(runs)} sessions rebuilt from BFCL v4 {DATA} (bfcl-eval {VERSION}, {LICENSE};"
        f" API sets: {names}); facts sampled from them after the fact"
    )
    return runs, note


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class _Run:
    """The messages of one session as they are rebuilt, and the memory fed with them."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.memory = HierarchicalMemory()
        self.task_starts: list[tuple[int, str]] = []  # (seq, first request) per task

    def add(self, role: str, content: str | None, **fields: Any) -> Message:
        message = Message(
            role=role,  # type: ignore[arg-type]
            content=content,
            seq=len(self.messages),
            id=f"b{len(self.messages)}",
            **fields,
        )
        message.token_count = count_message_tokens(message, MODEL)
        self.messages.append(message)
        self.memory.observe(message)
        return message

    def task(self, row: dict[str, Any], calls: list[list[str]]) -> None:
        apis = _environment(row)
        for number, (turn, turn_calls) in enumerate(zip(row["question"], calls, strict=False)):
            for said in turn:
                message = self.add("user", said["content"], kind="user_prompt")
                if number == 0 and said is turn[0]:
                    self.task_starts.append((message.seq, said["content"]))
            for call in turn_calls:
                self._call(apis, call)

    def _call(self, apis: dict[str, Any], call: str) -> None:
        name, args, kwargs = _parse_call(call)
        call_id = f"call_{len(self.messages)}"
        arguments = json.dumps({**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs})
        function = {"name": name, "arguments": arguments}
        calls = [{"id": call_id, "type": "function", "function": function}]
        self.add("assistant", None, tool_calls=calls)
        output = _execute(apis, name, args, kwargs)
        failed = isinstance(output, dict) and "error" in output
        self.add(
            "tool",
            json.dumps(output, default=str, ensure_ascii=False),
            tool_call_id=call_id,
            name=name,
            kind="error" if failed else "observation",
        )


def _environment(row: dict[str, Any]) -> dict[str, Any]:
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    apis = {}
    for class_name in row["involved_classes"]:
        module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
        instance = getattr(module, class_name)()
        config = copy.deepcopy(row.get("initial_config", {}).get(class_name, {}))
        instance._load_scenario(config, long_context=True)
        apis[class_name] = instance
    return apis


def _parse_call(call: str) -> tuple[str, list[Any], dict[str, Any]]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), call
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    return node.func.id, args, kwargs


def _execute(apis: dict[str, Any], name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    owner = next((api for api in apis.values() if hasattr(api, name)), None)
    if owner is None:
        return {"error": f"No such function: {name}"}
    try:
        return getattr(owner, name)(*args, **kwargs)
    except Exception as exc:  # the API's own failure, reported as the tool's result
        return {"error": f"{type(exc).__name__}: {exc}"}


def _session(
    rows: list[dict[str, Any]], truth: dict[str, list[list[str]]], rng: random.Random, turns: int
) -> Session:
    run = _Run()
    run.add("system", "You are an agent that completes the user's tasks with the tools given.")
    for row in rows:
        if len(run.messages) >= turns:
            break
        run.task(row, truth[row["id"]])
    facts = _sample_facts(run, rng)
    name = "+".join(sorted(rows[0]["involved_classes"]))
    return Session(name, "bfcl", run.messages, run.memory, facts)


def _sample_facts(run: _Run, rng: random.Random) -> list[Fact]:
    facts: list[Fact] = []
    first_seq, goal = run.task_starts[0]
    names: list[str] = []
    for _, text in run.task_starts:
        name, extra = _task_name(0, text), 1
        while name in names:  # the same opening words: take more of them
            name, extra = _task_name(100 * extra, text), extra + 1
        names.append(name)
    run.memory.set_goal(goal, names)  # each request is matched back to its own message
    for name in names[:-2]:
        run.memory.complete_subtask(name)
    facts.append(Fact("goal", goal))
    facts += [Fact("open subtask", name) for name in names[-2:]]
    users = [m for m in run.messages if m.role == "user" and m.seq != first_seq]
    pinned = rng.choice(users)
    pinned.pinned = True
    facts.append(Fact("pinned", pinned.text()))
    facts += _error_facts(run.messages, rng)
    facts += _sampled(rng, "file path", _file_names(run.messages))
    facts += _sampled(rng, "number", _values(run.messages))
    return facts


def _task_name(number: int, text: str) -> str:
    """The task's first request, its first words (more when two tasks start alike)."""
    words = text.split()
    return " ".join(words[: 8 + number // 100])


def _error_facts(messages: list[Message], rng: random.Random) -> list[Fact]:
    errors = [json.loads(m.text())["error"] for m in messages if m.kind == "error"]
    patterns = Counter(normalise_error(e) for e in errors)
    recurring = [p for p, n in patterns.items() if n >= 3]
    facts = [Fact("recurring error", _pattern_regex(p), regex=True) for p in recurring]
    once = sorted({e for e in errors if patterns[normalise_error(e)] < 3})
    return facts + _sampled(rng, "error message", once)


def _pattern_regex(pattern: str) -> str:
    """Found as written (its numbers) or as the pattern (N), any case."""
    return r"(?:\d+|N)".join(re.escape(part) for part in pattern.split("N"))


def _file_names(messages: list[Message]) -> list[str]:
    found = set()
    for message in messages:
        for call in message.tool_calls or ():
            arguments = json.loads(call["function"]["arguments"])
            for key in _FILE_ARGS:
                value = arguments.get(key)
                if isinstance(value, str) and re.fullmatch(r"[\w.-]+\.\w{1,5}", value):
                    found.add(value)
    return sorted(found)


def _values(messages: list[Message]) -> list[str]:
    every = Counter(n for m in messages for n in _NUMBER.findall(m.text()))
    answers = {
        n
        for m in messages
        if m.role == "tool" and len(m.text()) <= SHORT_RESULT
        for n in _NUMBER.findall(m.text())
    }
    return sorted(n for n in answers if every[n] == 1)


def _sampled(rng: random.Random, kind: str, values: list[str], most: int = 12) -> list[Fact]:
    return [Fact(kind, value) for value in rng.sample(values, min(most, len(values)))]
