"""The Responses and Gemini native-turn parsers (contextq.history.native): what items and
contents become, what is refused and where, the classifiers; and, for every format, that
any JSON at all is rows or a refusal naming a place, never a crash."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextq.errors import ValidationFailed
from contextq.history.native import (
    CallBook,
    anthropic,
    gemini,
    parse_default,
    parse_native,
    reasoning_units,
    responses,
)
from tests.api import native_data as data
from tests.engine.history.native_helpers import refused, summary

# ---------------------------------------------------------------- responses


def test_responses_items_group_into_rows() -> None:
    rows = parse_native("responses", data.responses_loop(), model="gpt-5.6")
    assert summary(rows) == [
        ("user", "Hi", [], None),
        ("assistant", None, ["call_01"], None),
        ("tool", '{"temp": -3}', [], "call_01"),
        ("assistant", "It is -3 °C.", [], None),
    ]
    assert [len(m.native.payload) for m in rows if m.native] == [1, 2, 1, 2]
    assert [reasoning_units(m.native) for m in rows] == [0, 1, 0, 1]


def test_responses_easy_form_custom_calls_and_opaque_items() -> None:
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": "be terse"},
        {
            "role": "user",
            "content": [
                {"type": "input_image", "image_url": "https://e.org/a.png", "detail": "low"}
            ],
        },
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search"},
        },
        {"type": "custom_tool_call", "call_id": "ct_1", "name": "patch", "input": "*** diff"},
        {
            "type": "custom_tool_call_output",
            "call_id": "ct_1",
            "output": [{"type": "input_text", "text": "done"}],
        },
        {"type": "compaction", "encrypted_content": "xyz"},
        {"type": "brand_new_item", "x": None},
    ]
    rows = parse_native("responses", items, model=None)
    assert summary(rows) == [
        ("system", "be terse", [], None),
        (
            "user",
            [{"type": "image_url", "image_url": {"url": "https://e.org/a.png", "detail": "low"}}],
            [],
            None,
        ),
        ("assistant", None, ["ct_1"], None),
        ("tool", "done", [], "ct_1"),
        ("assistant", None, [], None),
    ]
    assert rows[2].tool_calls == [
        {"id": "ct_1", "type": "function", "function": {"name": "patch", "arguments": "*** diff"}}
    ]
    assert [responses.is_opaque(i) for i in items] == [False, False, True, False, False, True, True]


@pytest.mark.parametrize(
    ("items", "field"),
    [
        (["x"], "items[0]"),
        ([{"content": "x"}], "items[0].type"),
        ([{"role": "tool", "content": "x"}], "items[0].role"),
        ([{"type": "message", "role": "user"}], "items[0].content"),
        (
            [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}],
            "items[0].arguments",
        ),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], "items[0].call_id"),
        ([{"type": "function_call", "call_id": "c", "arguments": "{}"}], "items[0].name"),
        ([{"type": "function_call_output", "output": "x"}], "items[0].call_id"),
        (
            [{"type": "reasoning", "id": "r"}, {"role": "assistant", "content": "a"}],
            "items[0].summary",
        ),
        (
            [{"type": "reasoning", "id": "r", "summary": []}, {"type": "function_call_output"}],
            "items[0]",
        ),
    ],
)
def test_responses_refusals_name_the_place(items: list[Any], field: str) -> None:
    assert refused("responses", items)[0] == field


def test_a_function_call_output_needs_its_output_and_answers_once() -> None:
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c", "output": "1"}
    no_output = {"type": "function_call_output", "call_id": "c"}
    assert refused("responses", [call, no_output])[0] == "items[1].output"
    assert refused("responses", [call, output, output])[0] == "items[2].call_id"


# ---------------------------------------------------------------- gemini


def test_gemini_contents_become_rows() -> None:
    rows = parse_native("gemini", data.gemini_parallel(), model="gemini-3-pro")
    assert summary(rows) == [
        ("user", "Weather in Oslo and Rome?", [], None),
        ("assistant", None, ["gemini-weather-1", "gemini-weather-2"], None),  # thought apart
        ("tool", '{"output":"-3"}', [], "gemini-weather-1"),
        ("tool", '{"output":"18"}', [], "gemini-weather-2"),
        ("assistant", "Oslo -3, Rome 18.", [], None),
    ]
    # a thought part and a signed call; a signed text
    assert [reasoning_units(m.native) for m in rows] == [0, 2, 0, 0, 1]


def test_gemini_sdk_dumps_in_snake_case_are_read_too() -> None:
    from google.genai import types

    model = types.Content(
        role="model",
        parts=[
            types.Part(
                function_call=types.FunctionCall(name="f", args={"a": 1}, id="call-1"),
                thought_signature=b"sig",
            ),
            types.Part(text="thinking", thought=True),
        ],
    )
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    name="f", id="call-1", response={"ok": True}
                )
            )
        ],
    )
    dumped = [c.model_dump(mode="json") for c in (model, answer)]  # nulls and snake_case
    rows = parse_native("gemini", dumped, model=None)
    assert summary(rows) == [
        ("assistant", None, ["call-1"], None),
        ("tool", '{"ok":true}', [], "call-1"),
    ]
    assert gemini.has_signature(dumped[0]["parts"][0]) and not gemini.is_opaque(
        dumped[0]["parts"][0]
    )


def test_gemini_synthetic_ids_skip_open_ones_and_a_missing_role_is_user() -> None:
    book_calls = {"gemini-f-1": "f"}  # a stored call of the same name, still open
    contents = [
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
        {"parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        {"parts": [{"functionResponse": {"name": "f", "response": {}}}]},
    ]
    rows = parse_native("gemini", contents, model=None, open_calls=book_calls)
    assert rows[0].tool_calls is not None and rows[0].tool_calls[0]["id"] == "gemini-f-2"
    assert [r.tool_call_id for r in rows[1:]] == ["gemini-f-1", "gemini-f-2"]  # oldest first


@pytest.mark.parametrize(
    ("contents", "field"),
    [
        ([3], "contents[0]"),
        ([{"role": "system", "parts": [{"text": "x"}]}], "contents[0].role"),
        ([{"role": "user", "parts": []}], "contents[0].parts"),
        ([{"role": "user"}], "contents[0].parts"),
        ([{"role": "user", "parts": ["x"]}], "contents[0].parts[0]"),
        (
            [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}],
            "contents[0].parts[0].functionCall.name",
        ),
        (
            [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}],
            "contents[0].parts[0].functionCall",
        ),
        (
            [{"role": "model", "parts": [{"function_response": {"name": "f"}}]}],
            "contents[0].parts[0].function_response",
        ),
        (
            [{"role": "user", "parts": [{"functionResponse": {"id": "x", "name": "f"}}]}],
            "contents[0].parts[0].functionResponse.id",
        ),
        (
            [{"role": "user", "parts": [{"functionResponse": {"response": {}}}]}],
            "contents[0].parts[0].functionResponse.name",
        ),
    ],
)
def test_gemini_refusals_name_the_place(contents: list[Any], field: str) -> None:
    assert refused("gemini", contents)[0] == field


def test_gemini_classifiers() -> None:
    assert gemini.is_reasoning({"text": "t", "thought": True})
    assert gemini.is_reasoning({"text": "t", "thoughtSignature": "c2ln"})
    assert not gemini.is_reasoning({"text": "t", "thought": False})
    assert gemini.is_opaque({"executableCode": {"code": "1"}})
    assert gemini.is_opaque({"text": "t", "newField": 1})
    assert not gemini.is_opaque({"inlineData": {"mimeType": "image/png", "data": "x"}})


# ---------------------------------------------------------------- the entry point


def test_unknown_formats_and_shapes_arerefused() -> None:
    assert refused("bedrock", [])[0] == "format"
    assert refused(["anthropic"], [])[0] == "format"  # type: ignore[arg-type]
    assert refused("gemini", {"role": "user"})[0] == "contents"  # type: ignore[arg-type]
    assert reasoning_units(None) == 0


# ---------------------------------------------------------------- any JSON at all


_WORDS = st.sampled_from(
    [
        "role",
        "content",
        "type",
        "text",
        "thinking",
        "signature",
        "data",
        "id",
        "name",
        "input",
        "tool_use",
        "tool_result",
        "tool_use_id",
        "user",
        "assistant",
        "system",
        "model",
        "parts",
        "functionCall",
        "functionResponse",
        "function_call",
        "call_id",
        "arguments",
        "output",
        "function_call_output",
        "reasoning",
        "summary",
        "message",
        "redacted_thinking",
        "thought",
        "thoughtSignature",
        "args",
        "response",
        "is_error",
        "image",
        "source",
        "inlineData",
        "citations",
        "custom_tool_call",
        "",
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _WORDS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_WORDS, inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=600, deadline=None)
@given(fmt=st.sampled_from(["anthropic", "responses", "gemini"]), items=st.lists(_JSON, max_size=5))
def test_any_json_is_rows_or_a_refusal_naming_a_place(fmt: str, items: list[Any]) -> None:
    try:
        rows = parse_native(fmt, items, model=None, open_calls={"id": "name"})
    except ValidationFailed as refused:
        assert refused.field
        return
    for row in rows:
        assert row.native is not None and row.native.format == fmt
        reasoning_units(row.native)
        for piece in (
            row.native.payload if isinstance(row.native.payload, list) else [row.native.payload]
        ):
            for unit in (
                (piece.get("content") or piece.get("parts") or [])
                if isinstance(piece, dict)
                else []
            ):
                (anthropic if fmt == "anthropic" else gemini).is_opaque(unit)
        responses.is_opaque(row.native.payload)


@settings(max_examples=300, deadline=None)
@given(messages=st.lists(st.dictionaries(_WORDS, _JSON, max_size=5), max_size=4))
def test_default_form_blocks_are_rows_or_a_refusal(messages: list[dict[str, Any]]) -> None:
    shaped = [
        {**m, "role": m.get("role") if m.get("role") in ("user", "assistant", "system") else "user"}
        for m in messages
        if isinstance(m.get("content"), list)
    ]
    try:
        parse_default(shaped, model=None, book=CallBook())
    except ValidationFailed as refused:
        assert refused.field
