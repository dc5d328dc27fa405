"""A loop recorded with `messages.record` comes back in its own format with its
reasoning, byte for byte (docs/api.md#native-turns, docs/context.md#reasoning-state; design 26 §3):
Anthropic thinking and redacted thinking with their signatures, Responses reasoning items with their
encrypted content, Gemini thought parts and thought signatures; and read in the other formats, the
count of what was left out.

These need the server's verbatim rendering of a native payload into its own format."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from contextq_client import Client
from tests.sdk import vendor_loops as vl
from tests.support.api import in_process_client

NO_DROP = {"other_vendor": 0, "earlier_turns": 0, "prefix_changed": 0}
# the reasoning units of each loop: Anthropic blocks, Responses items, Gemini parts
UNITS = {"anthropic": 4, "responses": 3, "gemini": 5}


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    with (
        in_process_client() as http,
        Client("http://testserver", api_key=owner.key, http_client=http) as client,
    ):
        yield client


def sent_turns(fmt: str, kwargs: dict[str, Any]) -> list[Any]:
    return list(
        kwargs["input"] if fmt == "responses" else kwargs.get("messages") or kwargs["contents"]
    )


def model_output(fmt: str, turns: list[Any]) -> list[str]:
    """The model's own turns (Anthropic assistant turns, Responses output items, Gemini
    model contents) as JSON text, in order."""
    if fmt == "anthropic":
        return [vl.dumps(t) for t in turns if t["role"] == "assistant"]
    if fmt == "gemini":
        return [vl.dumps(t) for t in turns if t["role"] == "model"]
    inputs = ("function_call_output", "custom_tool_call_output")
    return [vl.dumps(i) for i in turns if i.get("type") not in inputs and i.get("role") != "user"]


def reasoning(fmt: str, turns: list[Any]) -> list[str]:
    """The reasoning units in order, as JSON text."""
    if fmt == "anthropic":
        blocks = [b for t in turns if isinstance(t["content"], list) for b in t["content"]]
        return [vl.dumps(b) for b in blocks if b["type"] in ("thinking", "redacted_thinking")]
    if fmt == "responses":
        return [vl.dumps(i) for i in turns if i.get("type") == "reasoning"]
    parts = [p for t in turns for p in t["parts"]]
    return [vl.dumps(p) for p in parts if p.get("thought") or "thoughtSignature" in p]


@pytest.mark.parametrize("vendor", list(vl.LOOPS))
def test_a_recorded_loop_comes_back_in_its_own_format_with_its_reasoning(
    sdk: Client, vendor: str
) -> None:
    loop = vl.LOOPS[vendor]()
    conv_id = vl.record_loop(sdk, loop)
    kwargs = sdk.chat_kwargs(conv_id, model=loop.model, format=vendor)  # type: ignore[arg-type]
    vl.validate(vendor, kwargs)
    vl.check_tool_loop(loop, vendor, kwargs)
    sent = sent_turns(vendor, kwargs)
    assert model_output(vendor, sent) == model_output(vendor, loop.turns())
    assert reasoning(vendor, sent) == reasoning(vendor, loop.turns())
    assert len(reasoning(vendor, sent)) == UNITS[vendor]
    context = sdk.context.get(conv_id, model=loop.model, format=vendor)  # type: ignore[arg-type]
    assert context.reasoning_dropped == NO_DROP
    assert context.token_breakdown.reasoning > 0
    assert context.token_count == sum(context.token_breakdown.model_dump().values())


@pytest.mark.parametrize("vendor", list(vl.LOOPS))
def test_read_in_another_format_the_reasoning_left_out_is_counted(sdk: Client, vendor: str) -> None:
    loop = vl.LOOPS[vendor]()
    conv_id = vl.record_loop(sdk, loop)
    target = "anthropic" if vendor != "anthropic" else "openai"
    model = "claude-opus-4-7" if target == "anthropic" else "gpt-4o"
    context = sdk.context.get(conv_id, model=model, format=target)  # type: ignore[arg-type]
    assert context.reasoning_dropped == {**NO_DROP, "other_vendor": UNITS[vendor]}
    assert context.token_breakdown.reasoning == 0


def test_earlier_turns_reasoning_follows_the_target_models_rule(sdk: Client) -> None:
    """After the loop, a new question: Claude Opus 4.7 keeps the earlier turns' thinking,
    Claude Haiku 4.5 has it stripped (so contextq leaves it out, and says so)."""
    loop = vl.anthropic_loop()
    conv_id = vl.record_loop(sdk, loop)
    sdk.messages.record(
        conv_id, {"role": "user", "content": "And the next release?"}, format="anthropic"
    )
    kept = sdk.chat_kwargs(conv_id, model="claude-opus-4-7", format="anthropic")
    assert reasoning("anthropic", kept["messages"]) == reasoning("anthropic", loop.turns())
    stripped = sdk.context.get(conv_id, model="claude-haiku-4-5", format="anthropic")
    assert reasoning("anthropic", stripped.messages or []) == []
    assert stripped.reasoning_dropped == {**NO_DROP, "earlier_turns": UNITS["anthropic"]}
    for secret in loop.secrets:
        assert secret not in vl.dumps(stripped.messages)
