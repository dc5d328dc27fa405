"""Each invariant catches what it names: a real answer of the engine for a small crafted
conversation, broken on purpose in one way, is reported by that invariant (and the
answer as the engine gave it is not, for the promises today's engine keeps there)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from contextq.assembly import Carry, FileView, Prompts
from contextq.history import Message
from contextq.history.types import FORMAT_NAMES
from tests.engine.assembly.harness import engine, invariants
from tests.engine.assembly.harness.cases import Case
from tests.engine.assembly.harness.files import image_b64
from tests.engine.assembly.harness.invariants import Facts
from tests.engine.assembly.harness.text import marker, text_of


def _m(seq: int, role: str, text: str | None, **kw: Any) -> Message:
    content = None if text is None else marker(seq) + text
    return Message(role=role, content=content, seq=seq, id=f"m{seq}", **kw)  # type: ignore[arg-type]


def _round(seq: int, result: str) -> list[Message]:
    call = {"id": f"c{seq}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    said = "Running it." if seq % 4 == 1 else None  # calls with and without text
    return [
        _m(seq, "assistant", said, tool_calls=[call]),
        _m(seq + 1, "tool", result, tool_call_id=f"c{seq}"),
    ]


def crafted(fmt: str = "openai") -> Case:
    import random

    rng = random.Random(5)
    history = [
        _m(1, "user", "Fix the parser.", pinned=True, file_ids=["f1"]),
        _m(2, "assistant", "Looking."),
    ]
    for seq in range(3, 17, 2):
        history += _round(seq, text_of(rng, 120))
    history += [
        _m(17, "assistant", "Done with the first part."),
        _m(18, "user", "Now the report.", file_ids=["f2", "f3"]),
    ]
    files = {
        "f1": FileView("f1", "ready", filename="old.md", category="text", text="old notes"),
        "f2": FileView("f2", "ready", filename="new.md", category="text", text="new notes"),
        "f3": FileView(
            "f3",
            "ready",
            filename="shot.png",
            category="image",
            text="Image.",
            metadata={"width": 48, "height": 48},
            data_b64=image_b64((48, 48)),
            media_type="image/png",
        ),
    }
    later = [_m(19, "assistant", "Reading it."), _m(20, "user", "Thanks, go on.")]
    return Case(
        seed=-1,
        model="gpt-4o",
        window=128_000,
        format=fmt,
        strategy=None,
        options={},
        prompts=Prompts(system_prompt="You are a careful agent."),
        reads=[history, later],
        files=files,
    )


def facts(fmt: str = "openai") -> tuple[Facts, Facts]:
    case = crafted(fmt)
    stored = engine.new_conversation()
    first = engine.read(case, 0, stored)
    second = engine.read(case, 1, stored)
    return Facts(first), Facts(second, first)


def broken(f: Facts, change: Any, invariant: Any) -> list[str]:
    read = replace(f.read, answer=copy.deepcopy(f.read.answer))
    change(read.answer)
    return invariant(Facts(read, f.previous))


def _openai(answer: dict[str, Any], seq: int) -> dict[str, Any]:
    return next(
        m
        for m in answer["messages"]
        if (isinstance(m.get("content"), str) and m["content"].startswith(f"[#m{seq}]"))
        or (
            isinstance(m.get("content"), list)
            and m["content"][0].get("text", "").startswith(f"[#m{seq}]")
        )
    )


HOLDING = [
    invariants.sdk_valid,
    invariants.tool_calls_paired,
    invariants.token_breakdown_sums,
    invariants.budget_as_specified,
    invariants.within_budget,
    invariants.within_hard_room,
    invariants.system_verbatim,
    invariants.pinned_verbatim,
    invariants.newest_present,
    invariants.tool_results_name_their_path,
    invariants.stub_paths_exist,
    invariants.files_accounted,
    invariants.newest_files_first,
    invariants.clearing_before_dropping,
    invariants.prefix_between_cuts,
]


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@pytest.mark.parametrize("invariant", HOLDING, ids=lambda i: i.__name__)
def test_the_engines_answer_to_a_small_conversation_keeps_it(fmt: str, invariant: Any) -> None:
    first, second = facts(fmt)
    assert invariant(first) == []
    assert invariant(second) == []


def test_a_count_with_framing_is_told_apart_from_the_recount() -> None:
    first, _ = facts()
    honest = broken(
        first, lambda a: a.update(token_count=first.recount), invariants.token_count_recount
    )
    assert honest == []
    n = len(first.answer["messages"])
    framed = broken(
        first,
        lambda a: a.update(token_count=first.recount + 3 * n + 3),
        invariants.token_count_recount,
    )
    assert framed and "priming" in framed[0]


def test_each_invariant_reports_its_own_breakage() -> None:
    f, second = facts()
    big = {"role": "user", "content": "x " * 120_000}

    def drop_tool(a: dict[str, Any]) -> None:
        a["messages"] = [m for m in a["messages"] if m.get("tool_call_id") != "c15"]

    def unknown_key(a: dict[str, Any]) -> None:
        a["messages"][1]["colour"] = "red"

    def filtered_and_big(a: dict[str, Any]) -> None:
        a["filtered"] = True
        a["messages"].append(big)

    def alter(seq: int, text: str) -> Any:
        return lambda a: _openai(a, seq).update(content=f"[#m{seq}] {text}")

    def cut_result(a: dict[str, Any]) -> None:
        m = next(m for m in a["messages"] if m.get("tool_call_id") == "c3")
        m["content"] = m["content"][:40]

    def stub_nowhere(a: dict[str, Any]) -> None:
        m = next(m for m in a["messages"] if m.get("tool_call_id") == "c3")
        m["content"] = (
            "[Old tool result cleared. The full result is at /workspace/tool-results/m4.txt.]"
        )

    def new_docs_out(a: dict[str, Any]) -> None:
        for m in a["messages"]:
            if isinstance(m.get("content"), str) and '"new.md"' in m["content"]:
                m["content"] = json.dumps({"documents": []})
        a["failed_file_ids"].append("f2")
        a["file_notes"].append({"file_id": "f2", "reason": "no room"})

    def old_docs_silently_out(a: dict[str, Any]) -> None:
        a["messages"] = [
            m
            for m in a["messages"]
            if not (isinstance(m.get("content"), str) and '"old.md"' in m["content"])
        ]

    def drop_newest(a: dict[str, Any]) -> None:
        a["messages"].remove(_openai(a, 18))

    def drop_first_reply(a: dict[str, Any]) -> None:
        a["messages"].remove(_openai(a, 2))

    cases = [
        (invariants.sdk_valid, unknown_key),
        (invariants.tool_calls_paired, drop_tool),
        (invariants.token_breakdown_sums, lambda a: a["token_breakdown"].update(history=-5)),
        (invariants.budget_as_specified, lambda a: a.update(budget_tokens=a["budget_tokens"] + 1)),
        (invariants.within_budget, filtered_and_big),
        (invariants.within_hard_room, lambda a: a["messages"].append(big)),
        (invariants.system_verbatim, lambda a: a["messages"][0].update(content="Be brief.")),
        (invariants.pinned_verbatim, alter(1, "Fix the lexer.")),
        (invariants.newest_present, drop_newest),
        (invariants.tool_results_name_their_path, cut_result),
        (invariants.stub_paths_exist, stub_nowhere),
        (invariants.files_accounted, old_docs_silently_out),
        (invariants.newest_files_first, new_docs_out),
    ]
    for invariant, change in cases:
        assert broken(f, change, invariant), invariant.__name__
    # a message dropped while old results stay whole: by an answer that moves the cut
    # point or the line, or below the line an answer carries (the hysteresis of
    # docs/context.md#clearing-old-tool-results-with-hysteresis)
    clearing = invariants.clearing_before_dropping
    assert not broken(f, drop_first_reply, clearing)  # nothing moved, no line carried
    assert broken(replace(f, read=replace(f.read, moved=True)), drop_first_reply, clearing)
    carrying = replace(f, read=replace(f.read, carried=Carry(None, 16)))
    assert broken(carrying, drop_first_reply, clearing)
    moved = broken(
        second,
        lambda a: a["messages"][0].update(content="Another system prompt."),
        invariants.prefix_between_cuts,
    )
    assert moved, "prefix_between_cuts"


def _drop_result(a: dict[str, Any]) -> None:
    """The result of call c15 left out, in the Responses or the Gemini shape."""
    if a["format"] == "responses":
        a["input"] = [i for i in a["input"] if i.get("call_id") != "c15" or "name" in i]
        return
    for c in a["contents"]:
        c["parts"] = [p for p in c["parts"] if p.get("functionResponse", {}).get("id") != "c15"]
    a["contents"] = [c for c in a["contents"] if c["parts"]]


def _unknown_key(a: dict[str, Any]) -> None:
    (a["input"] if a["format"] == "responses" else a["contents"])[1]["colour"] = "red"


def _other_system(a: dict[str, Any]) -> None:
    if a["format"] == "responses":
        a["instructions"] = "Another system prompt."
    else:
        a["system_instruction"]["parts"][0]["text"] = "Another system prompt."


@pytest.mark.parametrize("fmt", ["responses", "gemini"])
def test_the_readers_of_each_new_format_report_breakage(fmt: str) -> None:
    """The harness reads Responses and Gemini answers in their own shapes: a key the SDK
    type lacks, a call left unanswered, a new system prompt, an altered prefix."""
    f, second = facts(fmt)
    assert broken(f, _unknown_key, invariants.sdk_valid)
    assert broken(f, _drop_result, invariants.tool_calls_paired)
    assert broken(f, _other_system, invariants.system_verbatim)
    assert broken(second, _other_system, invariants.prefix_between_cuts)
    assert f.sent.calls and f.sent.results and 18 in f.sent.texts
