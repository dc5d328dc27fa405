"""The binding oracle catches what it names (docs/context.md#bound-reasoning; issue 27).

A small bound trajectory (native Claude or Responses turns, then steps the simulated
model writes after reading each answer) is read by the real engine; where nothing before
a block moves (no reminder, no custom agent prompt, a roomy window), the engine's
answers keep every binding promise even before the engine knows the rule. Each answer
is then broken by hand in one way, and the invariant naming that promise reports it.
The canonical prefix itself: the one-pass hashes equal the definition's, and what the
model signs equals the prefix of the block in the answer that sends it back verbatim.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import Any

import pytest

from tests.engine.assembly.harness import binding_checks
from tests.engine.assembly.harness.binding import BOUND_MODELS, BoundSpec
from tests.engine.assembly.harness.canonical import (
    Canonical,
    hash_after,
    is_reasoning_node,
    prefix_hash,
)
from tests.engine.assembly.harness.cases import Case, generate_case
from tests.engine.assembly.harness.facts import Facts
from tests.engine.assembly.harness.run import readings
from tests.engine.assembly.harness.test_reasoning_invariants import native_case

BOUND = {"anthropic": "claude-fable-5-1", "responses": "gpt-5.6"}
LIST = {"anthropic": "messages", "responses": "input"}
Change = Callable[[dict[str, Any]], None]


def bound_case(vendor: str, steps: int = 4, seed: int = 5) -> Case:
    case = native_case(vendor, model=BOUND[vendor])
    case.bound = BoundSpec(seed, BOUND[vendor], steps, result_tokens=80, turn_share=0.0)
    return case


def trajectory(case: Case) -> Iterator[Facts]:
    """The answers the binding oracle judges (each while its state is the answer's)."""
    for f in readings(case):
        assert isinstance(f, Facts), f
        if f.binding is not None:
            yield f


def judged(f: Facts, change: Change | None, invariant: Any) -> list[str]:
    read = replace(f.read, answer=copy.deepcopy(f.read.answer))
    if change is not None:
        change(read.answer)
    return list(invariant(Facts(read, f.previous, binding=f.binding)))


def _blocks(answer: dict[str, Any]) -> list[tuple[list[Any], dict[str, Any]]]:
    """Each reasoning node with the list holding it, in answer order."""
    fmt = answer["format"]
    if fmt == "responses":
        return [(answer["input"], n) for n in answer["input"] if is_reasoning_node(fmt, n)]
    return [
        (m["content"], b)
        for m in answer["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if is_reasoning_node(fmt, b)
    ]


def _remove(answer: dict[str, Any], which: int) -> None:
    holder, node = _blocks(answer)[which]
    holder.remove(node)


def _edit_first_text(answer: dict[str, Any]) -> None:
    """Change a byte of the first message's text (before every block)."""
    first = answer[LIST[answer["format"]]][0]
    content = first["content"]
    if isinstance(content, str):
        first["content"] = content + "!"
    else:
        part = next(p for p in content if isinstance(p.get("text"), str))
        part["text"] += "!"


@pytest.mark.parametrize("vendor", ["anthropic", "responses"])
def test_the_engines_answers_keep_the_binding_where_nothing_moves(vendor: str) -> None:
    answers = 0
    for f in trajectory(bound_case(vendor)):
        answers += 1
        assert f.binding is not None and f.binding.trajectory.written
        for invariant in binding_checks.BINDING_INVARIANTS:
            assert judged(f, None, invariant) == [], invariant.__name__
    assert answers == 4


@pytest.mark.parametrize("vendor", ["anthropic", "responses"])
def test_a_block_after_a_changed_prefix_is_caught(vendor: str) -> None:
    for f in trajectory(bound_case(vendor)):
        found = judged(f, _edit_first_text, binding_checks.binding_prefix_kept)
        assert found and all("sent after another prefix" in p for p in found), found
        # the same for the system (Anthropic) or instructions (Responses)
        key = {"anthropic": "system", "responses": "instructions"}[vendor]

        def system(a: dict[str, Any], key: str = key) -> None:
            a[key] = "another system prompt"

        assert any("changed" in p for p in judged(f, system, binding_checks.binding_prefix_kept))


def test_a_cache_mark_and_a_dropped_block_change_no_prefix() -> None:
    for f in trajectory(bound_case("anthropic")):

        def mark(a: dict[str, Any]) -> None:
            for m in a["messages"]:
                for b in m["content"] if isinstance(m["content"], list) else ():
                    b["cache_control"] = {"type": "ephemeral"}

        assert judged(f, mark, binding_checks.binding_prefix_kept) == []
        assert judged(f, lambda a: _remove(a, 0), binding_checks.binding_prefix_kept) == []


@pytest.mark.parametrize("vendor", ["anthropic", "responses"])
def test_a_gap_in_the_middle_is_caught(vendor: str) -> None:
    checked = 0
    for f in trajectory(bound_case(vendor)):
        previous = f.binding.previous if f.binding is not None else None
        if not previous or len(previous) < 3:
            continue
        checked += 1
        middle = len(_blocks(f.answer)) // 2
        assert judged(f, partial(_remove, which=middle), binding_checks.binding_no_gap)
        assert judged(f, lambda a: _remove(a, 0), binding_checks.binding_no_gap) == []
        assert judged(f, lambda a: _remove(a, -1), binding_checks.binding_no_gap) == []
        everything = len(_blocks(f.answer))

        def drop_all(a: dict[str, Any], everything: int = everything) -> None:
            for _ in range(everything):
                _remove(a, 0)

        assert judged(f, drop_all, binding_checks.binding_no_gap) == []
    assert checked


@pytest.mark.parametrize("vendor", ["anthropic", "responses"])
def test_a_block_put_back_is_caught(vendor: str) -> None:
    """Read r leaves the oldest block out (by hand); read r+1, as the engine sent it,
    puts it back."""
    left_out = None
    hits = 0
    for f in trajectory(bound_case(vendor)):
        if left_out is not None:
            found = binding_checks.binding_never_back(Facts(f.read, f.previous, binding=left_out))
            assert found and "is sent again" in found[0], found
            hits += 1
        state = copy.deepcopy(f.binding)
        assert state is not None
        mutated = replace(f.read, answer=copy.deepcopy(f.read.answer))
        _remove(mutated.answer, 0)
        state.observe(Facts(mutated, f.previous))
        left_out = state
    assert hits == 3


@pytest.mark.parametrize("vendor", ["anthropic", "responses"])
def test_the_newest_steps_thinking_left_out_is_caught(vendor: str) -> None:
    for f in trajectory(bound_case(vendor)):
        t = f.binding.trajectory if f.binding is not None else None
        if t is None or t.newest_seq is None:
            continue  # the opening read: no step yet
        newest = len(_blocks(f.answer)) - 1  # the step's last block is its newest
        found = judged(f, partial(_remove, which=newest), binding_checks.binding_newest_sent)
        assert found and f"m{t.newest_seq}" in found[0]

        def moved_and_dropped(a: dict[str, Any], newest: int = newest) -> None:
            _edit_first_text(a)
            _remove(a, newest)

        # its prefix changed: leaving it out is the binding rule (prefix_kept judges)
        assert judged(f, moved_and_dropped, binding_checks.binding_newest_sent) == []


def test_prefix_changed_uncounted_or_unsaid_is_caught() -> None:
    for f in trajectory(bound_case("anthropic")):
        check = binding_checks.binding_dropped_counted
        assert judged(f, lambda a: _remove(a, 0), check)  # left out, not counted

        def counted(a: dict[str, Any]) -> None:
            _remove(a, 0)
            a["reasoning_dropped"]["prefix_changed"] = 1

        assert any("no warning" in p for p in judged(f, counted, check))

        def said(a: dict[str, Any]) -> None:
            counted(a)
            a["warnings"].append("the cut moved: thinking of 1 earlier step is left out")

        assert judged(f, said, check) == []


# ---------------------------------------------------------------- the canonical prefix


@pytest.mark.parametrize("vendor", ["anthropic", "responses"])
def test_the_one_pass_hashes_are_the_definitions(vendor: str) -> None:
    for f in trajectory(bound_case(vendor, steps=3)):
        canonical = Canonical(f.answer)
        assert canonical.prefixed
        for n in canonical.prefixed:
            assert n.hash == prefix_hash(f.answer, n.index, n.j)
        assert canonical.starts == [
            prefix_hash(f.answer, i, 0) for i in range(len(f.answer[LIST[vendor]]))
        ]


def test_what_the_model_signs_is_the_prefix_it_is_sent_after() -> None:
    """A step appended verbatim to the answer it was written after: each of its blocks'
    prefix hash is its signature (the leading one and one interleaved after a call)."""
    answer: dict[str, Any] = {
        "format": "anthropic",
        "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
        "tools": [],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    }
    use = {"type": "tool_use", "id": "t1", "name": "bash", "input": {}}
    first = {"type": "thinking", "thinking": "a", "signature": hash_after(answer)}
    second = {"type": "thinking", "thinking": "b", "signature": hash_after(answer, [first, use])}
    step = {"role": "assistant", "content": [first, use, second]}
    later = copy.deepcopy(answer)
    later["system"][0].pop("cache_control")  # a mark moved: no change
    later["messages"] += [step, {"role": "user", "content": [{"type": "text", "text": "ok"}]}]
    got = [(n.node["signature"], n.hash) for n in Canonical(later).prefixed]
    assert got == [(first["signature"],) * 2, (second["signature"],) * 2]
    assert first["signature"] != second["signature"]
    gemini = {
        "format": "gemini",
        "system_instruction": None,
        "tools": [],
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"text": "x", "thought": True}, {"text": "y"}]},
        ],
    }
    assert [n.hash for n in Canonical(gemini).prefixed] == [prefix_hash(gemini, 1, 0)]


# ---------------------------------------------------------------- the run draws them


def test_bound_trajectories_are_drawn_and_old_cases_keep_their_history() -> None:
    drawn = 0
    for seed in range(300):
        case, before = generate_case(seed), generate_case(seed, binding=False)
        assert [m.text() for b in case.reads for m in b] == [
            m.text() for b in before.reads for m in b
        ]
        if case.bound is None:
            assert case.model == before.model
            continue
        drawn += 1
        assert case.format in BOUND_MODELS and case.model == case.bound.model
    assert 30 <= drawn <= 150  # BOUND_SHARE of the anthropic and responses cases
