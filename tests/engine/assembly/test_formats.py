"""The output formats through the registry (`contextq.assembly.formats`), each answer
validated against its SDK's own types; the names of the formats spelled once."""

from __future__ import annotations

import itertools
from typing import Any, get_args

import anthropic.types as at
import openai.types.chat as oc
import pytest
from pydantic import TypeAdapter

from contextq.assembly import build_history_context
from contextq.assembly.formats import FORMATS, OPENING_TEXT, wire_format
from contextq.errors import ValidationFailed
from contextq.history import Message
from contextq.history.types import FORMAT_NAMES, FormatName
from contextq.settings import Settings
from tests.engine.history.builders import agent_history, assistant, call, result, user

PNG = "iVBORw0KGgo="
OPENAI_MESSAGES = TypeAdapter(list[oc.ChatCompletionMessageParam])
ANTHROPIC_MESSAGES = TypeAdapter(list[at.MessageParam])
OPENAI_KEYS = {
    "system": oc.ChatCompletionSystemMessageParam,
    "user": oc.ChatCompletionUserMessageParam,
    "assistant": oc.ChatCompletionAssistantMessageParam,
    "tool": oc.ChatCompletionToolMessageParam,
}


def context(messages: list[Message], fmt: FormatName) -> dict[str, Any]:
    """Every message, through the engine (noop: nothing left out), in `fmt`."""
    built = build_history_context(messages, settings=Settings(), strategy="noop", format=fmt)
    return {**built.report, "messages": built.messages, "system": built.system}


def without_marks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


def assert_valid_openai(messages: list[dict[str, Any]]) -> None:
    OPENAI_MESSAGES.validate_python(messages)
    for m in messages:
        typed = OPENAI_KEYS[m["role"]]
        allowed = typed.__required_keys__ | typed.__optional_keys__
        assert set(m) <= allowed, f"keys the API does not take: {set(m) - allowed}"
        assert None not in m.values()
        if m["role"] == "tool":
            assert m["tool_call_id"]


def assert_valid_anthropic(
    system: str | list[dict[str, Any]] | None, messages: list[dict[str, Any]]
) -> None:
    ANTHROPIC_MESSAGES.validate_python(messages)
    assert system is None or isinstance(system, str | list)
    assert messages[0]["role"] == "user"
    for a, b in itertools.pairwise(messages):
        assert a["role"] != b["role"], "roles must alternate"
    for i, turn in enumerate(messages):
        assert turn["role"] in ("user", "assistant")
        assert turn["content"], "no empty turns"
        for block in turn["content"]:
            if block["type"] == "text":
                assert block["text"].strip()
        types = [b["type"] for b in turn["content"]]
        if "tool_result" in types:  # results first, then text
            assert types == sorted(types, key=lambda t: t != "tool_result")
        uses = {b["id"] for b in turn["content"] if b["type"] == "tool_use"}
        if uses and i + 1 < len(messages):
            answered = {
                b["tool_use_id"] for b in messages[i + 1]["content"] if b["type"] == "tool_result"
            }
            assert uses <= answered, "every tool_use is answered in the next user turn"


def test_agent_history_is_valid_for_both_apis() -> None:
    msgs = agent_history(40, seed=5)
    openai_answer = context(msgs, "openai")
    assert_valid_openai(openai_answer["messages"])
    assert openai_answer["messages"] == [m.to_openai() for m in msgs]
    answer = context(msgs, "anthropic")
    assert without_marks(answer["system"]) == [
        {"type": "text", "text": "You are a careful coding agent."}
    ]
    assert_valid_anthropic(answer["system"], answer["messages"])


def test_anthropic_conversion_details() -> None:
    msgs = [
        Message(role="system", content="rules", seq=0),
        assistant(1, "I start"),  # filtering left an assistant turn first
        user(2, "q1"),
        user(3, "   "),
        user(4, "q2"),
        call(5, "call.1", "call_2"),
        result(6, "call.1", "file text"),
        result(7, "call_2", "Error: denied", kind="error"),
        user(
            8,
            [
                {"type": "text", "text": "see"},  # type: ignore[arg-type]
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        ),
        Message(role="system", content="late system note", seq=9),
        assistant(10, ""),
    ]
    answer = context(msgs, "anthropic")
    turns = answer["messages"]
    assert without_marks(answer["system"]) == [
        {"type": "text", "text": "rules"},
        {"type": "text", "text": "late system note"},
    ]
    assert turns[0] == {"role": "user", "content": [{"type": "text", "text": OPENING_TEXT}]}
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["text"] for b in turns[2]["content"]] == ["q1", "q2"]  # merged, blank dropped
    uses = turns[3]["content"]
    assert [(b["type"], b["id"], b["input"]) for b in uses] == [
        ("tool_use", "call_1", {"path": "a.py"}),
        ("tool_use", "call_2", {"path": "a.py"}),
    ]
    last = without_marks(turns[4]["content"])
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text", "image"]
    assert last[0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [{"type": "text", "text": "file text"}],
    }
    assert last[1]["is_error"] is True
    assert last[3]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    # the breakpoint before the newest turn: the last block before user message 8
    assert "cache_control" in turns[4]["content"][1]
    assert_valid_anthropic(answer["system"], turns)
    assert_valid_openai(context(msgs, "openai")["messages"])


def test_every_format_name_has_its_module() -> None:
    assert tuple(FORMATS) == FORMAT_NAMES == get_args(FormatName)
    for name, wire in FORMATS.items():
        assert wire.name == name
        assert wire_format(name) is wire


def test_an_unknown_format_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationFailed) as refused:
        wire_format("cohere")
    assert refused.value.field == "format"
    assert all(name in str(refused.value) for name in FORMAT_NAMES)


def test_sdk_unions_are_what_we_expect() -> None:
    # guard: if an SDK renames its types, these tests must notice
    assert oc.ChatCompletionToolMessageParam in get_args(oc.ChatCompletionMessageParam)
    assert at.MessageParam is not None
