"""The Anthropic native-turn parser and the default form's Anthropic turns
(contextq.history.native): what a turn becomes (rows, normalised fields, slices), what is
refused and where, and the classifiers the renderers use (reasoning, opaque)."""

from __future__ import annotations

from typing import Any

import pytest

from contextq.errors import ValidationFailed
from contextq.history.native import (
    CallBook,
    anthropic,
    parse_default,
    parse_native,
    reasoning_units,
)
from contextq.history.types import MAX_TOOL_CALLS, Native
from tests.api import native_data as data
from tests.engine.history.native_helpers import refused, summary

# ---------------------------------------------------------------- anthropic


def test_anthropic_turns_become_rows_with_their_slices() -> None:
    rows = parse_native("anthropic", data.anthropic_interleaved(), model="claude-x")
    assert summary(rows) == [
        ("user", "Compare a.py and b.py.", [], None),
        ("assistant", None, ["toolu_a", "toolu_b"], None),
        ("tool", "x = 1", [], "toolu_a"),
        ("tool", "x = 2", [], "toolu_b"),
        ("user", "Be brief.", [], None),
        ("assistant", "a sets 1, b sets 2.", [], None),
    ]
    assert all(m.native is not None and m.native.model == "claude-x" for m in rows)
    assert rows[2].native == Native(
        "anthropic",
        "claude-x",
        {"role": "user", "content": [data.anthropic_interleaved()[2]["content"][0]]},
    )
    assert [reasoning_units(m.native) for m in rows] == [0, 3, 0, 0, 0, 2]


def test_anthropic_user_blocks_normalise_to_openai_parts() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
    }
    url = {"type": "image", "source": {"type": "url", "url": "https://e.org/a.png"}}
    turn = {"role": "user", "content": [{"type": "text", "text": "look"}, image, url]}
    (row,) = parse_native("anthropic", [turn], model=None)
    assert row.content == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
        {"type": "image_url", "image_url": {"url": "https://e.org/a.png"}},
    ]
    system = {"role": "system", "content": [{"type": "text", "text": "be terse"}]}
    (row,) = parse_native("anthropic", [system], model=None)
    assert (row.role, row.content) == ("system", "be terse")


def test_an_error_result_is_an_error_row_and_a_stored_open_call_is_answerable() -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_9", "is_error": True, "content": "boom"}
    (row,) = parse_native(
        "anthropic",
        [{"role": "user", "content": [result]}],
        model=None,
        open_calls={"toolu_9": "f"},
    )
    assert (row.role, row.kind, row.tool_call_id, row.content) == (
        "tool",
        "error",
        "toolu_9",
        "boom",
    )


@pytest.mark.parametrize(
    ("turn", "field", "words"),
    [
        ({"role": "assistant", "content": 3}, "messages[0].content", "string or a list"),
        ({"role": "assistant"}, "messages[0].content", "needs its content"),
        ({"role": "assistant", "content": ["x"]}, "messages[0].content[0]", "object"),
        ({"role": "assistant", "content": [{"text": "x"}]}, "messages[0].content[0].type", "type"),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": []}],
            },
            "messages[0].content[0].input",
            "object",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}]},
            "messages[0].content[0].input",
            "input",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
            "messages[0].content[0]",
            "user turn",
        ),
        (
            {"role": "user", "content": [{"type": "thinking", "thinking": "", "signature": "s"}]},
            "messages[0].content[0]",
            "assistant turn",
        ),
        (
            {"role": "system", "content": [{"type": "image", "source": {}}]},
            "messages[0].content[0]",
            "text blocks only",
        ),
        (
            {"role": "assistant", "content": [{"type": "thinking", "signature": "s"}]},
            "messages[0].content[0].thinking",
            "string",
        ),
        (
            {"role": "assistant", "content": [{"type": "text", "text": None}]},
            "messages[0].content[0].text",
            "string",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t" * 201, "name": "f", "input": {}}],
            },
            "messages[0].content[0].id",
            "200 characters",
        ),
    ],
)
def test_anthropic_refusals_name_the_place(turn: dict[str, Any], field: str, words: str) -> None:
    where, message = refused("anthropic", [turn])
    assert where == field and words in message


def test_an_assistant_turn_makes_at_most_max_tool_calls() -> None:
    uses = [
        {"type": "tool_use", "id": f"t{i}", "name": "f", "input": {}}
        for i in range(MAX_TOOL_CALLS + 1)
    ]
    where, _ = refused("anthropic", [{"role": "assistant", "content": uses}])
    assert where == f"messages[0].content[{MAX_TOOL_CALLS}]"


def test_anthropic_classifiers() -> None:
    blocks = data.anthropic_server_tools()[1]["content"]
    assert [anthropic.is_opaque(b) for b in blocks] == [True, True, True, True]
    assert not any(anthropic.is_reasoning(b) for b in blocks)
    plain = {
        "type": "text",
        "text": "hi",
        "citations": [{"type": "char_location", "cited_text": "x"}],
    }
    assert not anthropic.is_opaque(plain)
    thinking = {"type": "thinking", "thinking": "", "signature": "s"}
    assert anthropic.is_reasoning(thinking) and not anthropic.is_opaque(thinking)
    assert not anthropic.is_opaque({"type": "tool_use", "id": "t", "name": "f", "input": {}})


# ---------------------------------------------------------------- the default form


def test_the_default_form_reads_anthropic_blocks_as_an_anthropic_turn() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "q", "pinned": True},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "calling"}],
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t2", "name": "g", "input": {"a": 1}}],
            "name": "agent",
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "ok"},
                {"type": "text", "text": "go"},
            ],
            "pinned": True,
            "file_ids": ["f1"],
        },
    ]
    rows = parse_default(messages, model="m", book=CallBook())
    assert summary(rows) == [
        ("user", "q", [], None),
        ("assistant", [{"type": "text", "text": "calling"}], ["c1"], None),  # plain OpenAI
        ("tool", "r", [], "c1"),
        ("assistant", None, ["t2"], None),
        ("tool", "ok", [], "t2"),
        ("user", "go", [], None),
    ]
    assert [m.native is not None for m in rows] == [False, False, False, True, True, True]
    assert rows[3].name == "agent" and rows[3].native is not None
    assert [m.pinned for m in rows[4:]] == [True, True]  # the message's rows, all pinned
    assert (rows[4].file_ids, rows[5].file_ids) == ([], ["f1"])  # on its first non-tool row


def test_the_default_form_refuses_blocks_in_a_tool_message() -> None:
    tool = {
        "role": "tool",
        "tool_call_id": "c",
        "content": [{"type": "tool_result", "tool_use_id": "c"}],
    }
    with pytest.raises(ValidationFailed) as caught:
        parse_default([tool], model=None, book=CallBook(), single=True)
    assert caught.value.field == "content"
