"""Native payloads in the engine's render (docs/context.md#reasoning-state): what a row shown
shorter keeps (`shown_as`), the cost of a row with and without its reasoning, the
Gemini dummy and key order, the Anthropic tool loop through a text riding with the
results (and the user and system messages after it), the cache mark never on a block
that takes none."""

from __future__ import annotations

import json
from typing import Any

from contextq.assembly import build_history_context
from contextq.assembly.formats import FORMATS
from contextq.assembly.pieces import message_piece
from contextq.assembly.wire import Target
from contextq.history.native import parse_native, shown_as
from contextq.history.native.gemini import DUMMY_SIGNATURE
from contextq.reasoning_rules import rule_for
from contextq.settings import get_settings
from tests.api import native_data as data


def _rows(fmt: str, batch: list[Any]) -> list[Any]:
    rows = parse_native(fmt, batch, model="m")
    for i, row in enumerate(rows):
        row.id, row.seq = f"r{i}", i + 1
    return rows


def _read(fmt: str, batch: list[Any], model: str, **kw: Any) -> dict[str, Any]:
    context = build_history_context(
        _rows(fmt, batch), settings=get_settings(), model=model, format=fmt, **kw
    )
    return {"turns": context.messages, **context.report}


def test_a_result_shown_shorter_keeps_its_native_fields() -> None:
    anthropic = _rows("anthropic", data.anthropic_interleaved())[3]  # toolu_b, a list content
    shown = shown_as(anthropic.native, "tool", "[stub]")
    assert shown is not None
    assert shown.payload["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "[stub]", "is_error": False}
    ]
    responses = _rows("responses", data.responses_loop())[2]
    assert shown_as(responses.native, "tool", "[stub]").payload == [  # type: ignore[union-attr]
        {"type": "function_call_output", "call_id": "call_01", "output": "[stub]"}
    ]
    gemini = _rows("gemini", data.gemini_parallel())[2]
    part = shown_as(gemini.native, "tool", "[stub]").payload["parts"][0]  # type: ignore[union-attr]
    assert part == {"functionResponse": {"name": "weather", "response": {"output": "[stub]"}}}


def test_an_assistant_shown_shorter_keeps_its_reasoning_and_calls() -> None:
    turn = _rows("anthropic", data.anthropic_interleaved())[-1]
    shown = shown_as(turn.native, "assistant", "cut")
    assert shown is not None
    kinds = [(b["type"], b.get("text")) for b in shown.payload["content"]]
    assert kinds == [("thinking", None), ("text", "cut"), ("thinking", None)]
    items = _rows("responses", data.responses_loop())[-1]  # rs_02 and the answer
    shown = shown_as(items.native, "assistant", "cut")
    assert shown is not None and shown.payload[0] == items.native.payload[0]  # type: ignore[union-attr]
    assert shown.payload[1]["content"][0]["text"] == "cut"
    assert shown.payload[1]["phase"] == "final_answer"


def test_a_row_costs_what_is_sent_with_or_without_its_reasoning() -> None:
    row = _rows("anthropic", data.anthropic_interleaved())[1]
    for fmt in ("anthropic", "responses", "gemini", "openai"):
        wire = FORMATS[fmt]  # type: ignore[index]
        target = Target(wire, "cl100k_base", "anthropic", None, rule_for("claude-haiku-4-5"))
        current, earlier = message_piece(row, target), message_piece(row, target, current=False)
        if fmt == "anthropic":
            assert current.reasoning_tokens > 0 and current.reasoning_left is None
            assert earlier.reasoning_tokens == 0 and earlier.reasoning_left == ("earlier_turns", 3)
            assert current.tokens - earlier.tokens == current.reasoning_tokens
        else:
            assert current.reasoning_left == earlier.reasoning_left == ("other_vendor", 3)
            assert current.tokens == earlier.tokens and current.reasoning_tokens == 0


def test_gemini_keeps_its_key_order_and_gets_the_dummy_where_a_step_has_none() -> None:
    contents = data.gemini_parallel()
    calls = [{"functionCall": p["functionCall"]} for p in contents[1]["parts"][1:]]
    contents[1] = {"parts": calls, "role": "model"}  # no signature; parts before role
    answer = _read("gemini", contents, "gemini-3-pro-preview")
    step = answer["turns"][1]
    assert list(step) == ["parts", "role"]
    assert step["parts"][0]["thoughtSignature"] == DUMMY_SIGNATURE
    # the dummy is in the count, not in the reasoning
    assert answer["token_breakdown"]["reasoning"] > 0  # the final text's own signature
    sent = json.dumps(answer["turns"])
    assert sent.count(DUMMY_SIGNATURE) == 1


def test_the_anthropic_loop_goes_on_through_text_riding_with_the_results() -> None:
    loop = data.anthropic_interleaved()[:3]  # its last user turn: two results and a text
    answer = _read("anthropic", loop, "claude-haiku-4-5")
    assert answer["turns"][1]["content"] == loop[1]["content"]
    assert answer["reasoning_dropped"]["earlier_turns"] == 0
    # its thinking leaves once the turn is over: the stable prefix ends before the loop
    marks = [b for m in answer["turns"] for b in m["content"] if "cache_control" in b]
    assert marks == []
    kept = _read("anthropic", loop, "claude-opus-4-7")  # keeps it: the mark before the text
    marked = [b["type"] for m in kept["turns"] for b in m["content"] if "cache_control" in b]
    assert marked == ["tool_result"]
    # with the model's answer after it, that loop has ended: Haiku gets none of its
    # thinking (3 units), the answer's own (2) as the current loop's
    ended = _read("anthropic", data.anthropic_interleaved(), "claude-haiku-4-5")
    assert ended["reasoning_dropped"]["earlier_turns"] == 3
    assert ended["token_breakdown"]["reasoning"] > 0


def test_the_anthropic_loop_goes_on_through_user_and_system_messages_after_the_text() -> None:
    # they join the results' user turn (a system message is lifted into `system`), so the
    # assistant turn before them is still the latest one: Anthropic checks its thinking
    # (fuzz seeds 15679 and 56928: a user or system row stood between results and newest)
    loop = data.anthropic_interleaved()[:3]
    for after in (
        [{"role": "user", "content": "And keep it short."}],
        [{"role": "system", "content": "Operator note."}, {"role": "user", "content": "Go."}],
    ):
        answer = _read("anthropic", [*loop, *after], "claude-haiku-4-5")
        assert [m["role"] for m in answer["turns"]] == ["user", "assistant", "user"]
        assert answer["turns"][1]["content"] == loop[1]["content"]
        assert answer["reasoning_dropped"]["earlier_turns"] == 0


def test_the_cache_mark_skips_thinking_and_unknown_blocks() -> None:
    batch = data.anthropic_server_tools()
    batch[1]["content"].insert(3, {"type": "thinking", "thinking": "", "signature": data.SIG})
    batch.append({"role": "user", "content": "And then?"})
    answer = _read("anthropic", batch, "claude-opus-4-7")
    blocks = answer["turns"][1]["content"]
    marked = [b["type"] for b in blocks if "cache_control" in b]
    assert marked == ["text"]  # not the thinking block, not the unknown one after it
    assert [b["type"] for b in blocks][-2:] == ["thinking", "future_block"]
