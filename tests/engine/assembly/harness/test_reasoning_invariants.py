"""Each reasoning invariant catches what it names: the engine's real answer for a small
conversation of native turns (built by the generators, parsed by the real parser), read
in its own vendor's format, keeps every promise; broken on purpose in one way, it is
reported by the invariant that names that promise (docs/context.md#reasoning-state)."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace
from typing import Any

import pytest

from contextq.assembly import Prompts
from contextq.history import Message
from tests.engine.assembly.harness import engine, invariants, reasoning_checks
from tests.engine.assembly.harness.cases import Case
from tests.engine.assembly.harness.invariants import Facts
from tests.engine.assembly.harness.native_turns import parse_batch
from tests.engine.assembly.harness.reasoning import DUMMY_SIGNATURE, is_pure_reasoning
from tests.engine.assembly.harness.text import marker
from tests.engine.assembly.harness.vendor_turns import Style

MODELS = {"anthropic": "claude-opus-4-5", "responses": "gpt-5.6", "gemini": "gemini-3-pro-preview"}
LIST = {"anthropic": "messages", "responses": "input", "gemini": "contents"}


def _m(seq: int, role: str, text: str | None, **kw: Any) -> Message:
    content = None if text is None else marker(seq) + text
    return Message(role=role, content=content, seq=seq, id=f"m{seq}", **kw)  # type: ignore[arg-type]


def _call(seq: int, j: int) -> dict[str, Any]:
    arguments = json.dumps({"cmd": f"step {seq}.{j}"})
    return {
        "id": f"call_{seq}_{j}",
        "type": "function",
        "function": {"name": "bash", "arguments": arguments},
    }


def _turns() -> list[Message]:
    """Two turns, the second an open tool loop of two steps (parallel calls first)."""
    return [
        _m(1, "user", "Fix the parser."),
        _m(2, "assistant", "Reading it.", tool_calls=[_call(2, 0)]),
        _m(3, "tool", "def parse(): ...", tool_call_id="call_2_0"),
        _m(4, "assistant", "Fixed."),
        _m(5, "user", "Now the report."),
        _m(6, "assistant", None, tool_calls=[_call(6, 0), _call(6, 1)]),
        _m(7, "tool", "rows: 3", tool_call_id="call_6_0"),
        _m(8, "tool", "cols: 2", tool_call_id="call_6_1"),
        _m(9, "assistant", "One more look.", tool_calls=[_call(9, 0)]),
        _m(10, "tool", "ok", tool_call_id="call_9_0"),
    ]


def native_case(
    vendor: str, *, earlier: str | None = None, model: str | None = None, interject: bool = False
) -> Case:
    """The two turns posted natively in `vendor` (the first in `earlier`, another
    vendor, when given), thinking throughout, read in `vendor`'s format; `interject`: a
    user message posted with the last results."""
    rng = random.Random(7)
    turns = _turns() + ([_m(11, "user", "Be brief.")] if interject else [])
    first, second = turns[:4], turns[4:]
    rows = []
    for batch, v in ((first, earlier or vendor), (second, vendor)):
        style = Style(v, thinks=True, interleaves=True, ids=True)
        rows += parse_batch(rng, batch, style, MODELS[v], rows)
    return Case(
        seed=-2,
        model=model or MODELS[vendor],
        window=128_000,
        format=vendor,
        strategy=None,
        options={},
        prompts=Prompts(system_prompt="You are a careful agent."),
        reads=[rows],
    )


def facts_of(case: Case) -> Facts:
    return Facts(engine.read(case, 0, engine.new_conversation()))


def broken(f: Facts, change: Any, invariant: Any) -> list[str]:
    read = replace(f.read, answer=copy.deepcopy(f.read.answer))
    change(read.answer)
    return list(invariant(Facts(read, f.previous)))


def _nodes(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Every assistant-side node of the answer, in order (the same dicts)."""
    fmt = answer["format"]
    if fmt == "responses":
        return list(answer["input"])
    key = "parts" if fmt == "gemini" else "content"
    role = "model" if fmt == "gemini" else "assistant"
    return [n for t in answer[LIST[fmt]] if t["role"] == role for n in t[key]]


def _reasoning(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in _nodes(answer) if is_pure_reasoning(answer["format"], n)]


@pytest.mark.parametrize("vendor", ["anthropic", "responses", "gemini"])
@pytest.mark.parametrize("invariant", invariants.INVARIANTS, ids=lambda i: i.__name__)
def test_the_engines_answer_to_native_turns_keeps_it(vendor: str, invariant: Any) -> None:
    f = facts_of(native_case(vendor))
    assert _reasoning(f.answer), "the answer sends its vendor's reasoning"
    if invariant.__name__ in ("newest_files_first", "files_accounted"):
        return  # no files here
    assert invariant(f) == []


@pytest.mark.parametrize("vendor", ["anthropic", "responses", "gemini"])
def test_edited_reordered_or_merged_reasoning_is_caught(vendor: str) -> None:
    f = facts_of(native_case(vendor))
    check = reasoning_checks.reasoning_verbatim

    def edit(a: dict[str, Any]) -> None:
        node = _reasoning(a)[0]
        key = {"anthropic": "signature", "responses": "id", "gemini": "text"}[vendor]
        node[key] = str(node.get(key)) + "x"

    def swap(a: dict[str, Any]) -> None:
        nodes = _nodes(a)
        first = next(i for i, n in enumerate(nodes) if is_pure_reasoning(vendor, n))
        following = nodes[first + 1]
        holder = next(t for t in _holders(a) if nodes[first] in t)
        i = next(k for k, n in enumerate(holder) if n is nodes[first])
        if following in holder:
            holder[i], holder[i + 1] = following, nodes[first]

    def reorder_keys(a: dict[str, Any]) -> None:
        node = _reasoning(a)[0]
        items = list(node.items())[::-1]
        node.clear()
        node.update(items)

    for change in (edit, swap, reorder_keys):
        assert broken(f, change, check), change.__name__


def _holders(answer: dict[str, Any]) -> list[list[dict[str, Any]]]:
    fmt = answer["format"]
    if fmt == "responses":
        return [answer["input"]]
    key = "parts" if fmt == "gemini" else "content"
    return [t[key] for t in answer[LIST[fmt]]]


@pytest.mark.parametrize("vendor", ["anthropic", "responses", "gemini"])
def test_current_loop_reasoning_left_out_is_caught(vendor: str) -> None:
    f = facts_of(native_case(vendor, model={"responses": "gpt-5"}.get(vendor)))
    loop = [n for n in _reasoning(f.answer) if _owner(vendor, n) >= 6]
    assert loop

    def drop(a: dict[str, Any]) -> None:
        target = next(n for n in _reasoning(a) if _owner(vendor, n) >= 6)
        for holder in _holders(a):
            if target in holder:
                holder.remove(target)

    assert broken(f, drop, reasoning_checks.current_loop_reasoning_sent)


def _owner(fmt: str, node: dict[str, Any]) -> int:
    from tests.engine.assembly.harness.reasoning import owner_of

    return owner_of(fmt, node) or -1


def test_foreign_state_and_reasoning_as_text_are_caught() -> None:
    f = facts_of(native_case("anthropic", earlier="responses"))
    check = reasoning_checks.no_foreign_opaque_state
    assert check(f) == []
    assert f.answer["reasoning_dropped"]["other_vendor"] > 0  # the Responses turn's

    def foreign(a: dict[str, Any]) -> None:
        item = {"type": "thinking", "thinking": "RZNr2k0 borrowed", "signature": "OPQr2k0AAAA"}
        a["messages"][1]["content"].insert(0, item)

    def as_text(a: dict[str, Any]) -> None:
        thinking = _reasoning(a)[0]
        a["messages"][-1]["content"].append({"type": "text", "text": thinking["signature"]})

    assert broken(f, foreign, check)
    assert broken(f, as_text, check)


def test_a_reasoning_item_parted_from_its_follower_is_caught() -> None:
    f = facts_of(native_case("responses"))
    check = reasoning_checks.reasoning_items_adjacent

    def part(a: dict[str, Any]) -> None:
        items = a["input"]
        i = next(k for k, item in enumerate(items) if item.get("type") == "reasoning")
        items.insert(i + 1, {"type": "message", "role": "user", "content": "in between"})

    assert broken(f, part, check)


def test_a_current_step_without_a_signature_and_a_stray_dummy_are_caught() -> None:
    f = facts_of(native_case("gemini"))
    check = reasoning_checks.gemini_signatures
    contents = f.answer["contents"]
    steps = [
        c for c in contents if c["role"] == "model" and any("functionCall" in p for p in c["parts"])
    ]
    assert len(steps) >= 2

    def unsigned(a: dict[str, Any]) -> None:
        last = [c for c in a["contents"] if c["role"] == "model"][-1]
        for p in last["parts"]:
            p.pop("thoughtSignature", None)

    def stray(a: dict[str, Any]) -> None:
        first = next(c for c in a["contents"] if c["role"] == "model")
        first["parts"][0]["thoughtSignature"] = DUMMY_SIGNATURE

    assert broken(f, unsigned, check)
    assert broken(f, stray, check)


@pytest.mark.parametrize("vendor", ["anthropic", "responses", "gemini"])
def test_miscounted_reasoning_is_caught(vendor: str) -> None:
    f = facts_of(native_case(vendor, model="claude-sonnet-4-5"))  # strips earlier turns
    assert f.answer["reasoning_dropped"]["earlier_turns"] > 0
    for key in ("other_vendor", "earlier_turns", "prefix_changed"):

        def more(a: dict[str, Any], key: str = key) -> None:
            a["reasoning_dropped"][key] += 1

        assert broken(f, more, reasoning_checks.reasoning_dropped_counted), key

    def tokens(a: dict[str, Any]) -> None:
        a["token_breakdown"]["reasoning"] += 1

    assert broken(f, tokens, reasoning_checks.reasoning_tokens_counted)


def test_repeated_tool_use_ids_are_caught() -> None:
    f = facts_of(native_case("anthropic"))

    def repeat(a: dict[str, Any]) -> None:
        uses = [b for m in a["messages"] for b in m["content"] if b.get("type") == "tool_use"]
        uses[-1]["id"] = uses[0]["id"]

    assert any("unique" in p for p in broken(f, repeat, invariants.sdk_valid))


def test_a_user_message_sent_with_tool_results_keeps_the_anthropic_loop() -> None:
    """Anthropic: results and the user's words in one user turn; the loop goes on
    through it, so the step before keeps its thinking on a model that strips earlier
    turns' (and the invariants judge it so); Gemini starts a turn there."""
    f = facts_of(native_case("anthropic", model="claude-sonnet-4-5", interject=True))
    assert (f.loop_seq, f.loop_may_seq) == (9, 6)  # the latest step, the whole loop
    last_step = [n for n in _reasoning(f.answer) if _owner("anthropic", n) == 9]
    assert last_step, "the step whose results the user message came with keeps its thinking"
    for invariant in reasoning_checks.REASONING_INVARIANTS:
        assert invariant(f) == [], invariant.__name__
    g = facts_of(native_case("gemini", model="claude-sonnet-4-5", interject=True))
    assert g.loop_seq == 11
    assert g.answer["reasoning_dropped"]["earlier_turns"] > 0
