"""What the invariants know without the assembly: an answer read as a client reads it.

- `recount`: docs/token-counting.md as clarified — the JSON serialisation of each message as sent,
  nothing added (no per-message framing, no reply priming); a node whose `content` is a
  list counts as itself with `content: []` plus each element; an image by its provider's
  published formula for its decoded pixel size; an audio part by its decoded duration;
  Anthropic's `system` blocks as nodes; a calibrated answer (a closed tokenizer) from its
  own `token_count_encoding` and `token_count_factors`. It is `tests.support.recount`,
  shared with the API tests: one recount, read from the answer alone.
- `hard_room` / `budget`: the formulas of docs/context.md#the-rooms from the model catalogue and the
options.
- `sdk_problems`: every message checked against the installed `openai` / `anthropic`
  SDK's own parameter types (pydantic over their TypedDicts, strictly, extra keys caught):
  Chat messages, Messages API turns, Responses input items; google-genai's `Content`
  (a pydantic model that forbids unknown keys) for Gemini's contents.
(What an answer holds, `Sent`, is read in `sent`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pydantic

from contextq.catalog import resolve_model
from contextq.settings import Settings
from tests.engine.assembly.harness.files import wav_seconds
from tests.engine.assembly.harness.vendor_turns import UNKNOWN_BLOCK, UNKNOWN_FIELD, UNKNOWN_ITEM
from tests.support.recount import Counter, json_tokens
from tests.support.recount import recount as shared_recount

# ---------------------------------------------------------------- counting


def recount(answer: dict[str, Any]) -> int:
    """The count of the list (docs/token-counting.md) as sent (`tests.support.recount`, the one
    recount the API tests use too): exact in the model's encoding, or calibrated as the answer says;
    audio by its WAV duration."""
    return shared_recount(answer, audio=wav_seconds)


def answer_tokens(answer: dict[str, Any], node: Any) -> int:
    """A node's compact JSON counted as `answer` counts (calibrated where it is)."""
    return json_tokens(node, Counter(answer))


def wire_list(answer: dict[str, Any]) -> list[Any]:
    """The answer's list of turns or items, whatever its format."""
    key = {"responses": "input", "gemini": "contents"}.get(answer["format"], "messages")
    return list(answer[key])


def shape_overhead(answer: dict[str, Any]) -> int:
    """An upper bound of what a message costs more in the answer's format than as its
    Chat JSON (which the checks size messages by): a Responses item's frame and its
    `input_text` part's keys, a Gemini content's frame and its text part's key."""
    if answer["format"] == "responses":
        frame = {"type": "message", "role": "user", "content": []}
        return answer_tokens(answer, frame) + answer_tokens(answer, {"type": "input_text"})
    if answer["format"] == "gemini":
        frame = {"role": "model", "parts": []}
        return answer_tokens(answer, frame) + answer_tokens(answer, {"text": ""})
    return 0


# ---------------------------------------------------------------- limits


@dataclass(frozen=True, slots=True)
class Limits:
    hard: int
    budget: int


def limits(answer: dict[str, Any], options: dict[str, Any], settings: Settings) -> Limits:
    """docs/context.md#the-rooms: hard room = context_limit - max_output_tokens - tool definitions
    (a model with a separate input limit never gets more); budget = hard x budget_percentage -
    reserve_tokens. max_output_tokens: the model's, capped at a quarter of the window,
    unless the options set it."""
    model = resolve_model(answer["model"] or None, settings)
    window = model.context_window
    max_output = options.get("max_output_tokens")
    if max_output is None:
        max_output = min(model.max_output_tokens, window // 4)
    room = window - max_output
    if model.max_input_tokens is not None:
        room = min(room, model.max_input_tokens)
    tools = options.get("tool_definition_tokens")
    if tools is None:
        tools = answer_tokens(answer, answer["tools"]) if answer["tools"] else 0
    hard = max(0, room - tools)
    budget = max(
        0, int(hard * options.get("budget_percentage", 0.8)) - options.get("reserve_tokens", 1000)
    )
    return Limits(hard, budget)


# ---------------------------------------------------------------- the SDKs' types


def _materialise(value: Any) -> Any:
    """pydantic validates an `Iterable[...]` field lazily: walk it (which validates it)."""
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [_materialise(v) for v in value]
    return value


@lru_cache(maxsize=1)
def _adapters() -> dict[str, pydantic.TypeAdapter[Any]]:
    from anthropic.types import ContentBlockParam, MessageParam, TextBlockParam
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.responses import ResponseInputItemParam

    return {
        "openai": pydantic.TypeAdapter(ChatCompletionMessageParam),
        "responses": pydantic.TypeAdapter(ResponseInputItemParam),
        "anthropic": pydantic.TypeAdapter(MessageParam),
        "block": pydantic.TypeAdapter(ContentBlockParam),
        "system": pydantic.TypeAdapter(TextBlockParam),
    }


def _check(adapter: pydantic.TypeAdapter[Any], value: Any, where: str) -> str | None:
    try:
        out = adapter.validate_python(value, strict=True)
        if any(isinstance(v, list) for v in value.values()):  # validated lazily: walk them
            out = _materialise(out)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        return f"{where}: {first['msg']} at {first['loc']}"
    if out != value:
        return f"{where}: keys the SDK type does not have (dropped on validation)"
    return None


def _anthropic_turn(m: dict[str, Any], where: str) -> list[str]:
    """One turn as a `MessageParam`, each block as a `ContentBlockParam` (a mid-
    conversation system turn's as a `TextBlockParam`): the union MessageParam's content
    takes also accepts the SDK's response models, which keep any key, so each block is
    checked against the parameter types alone. Blocks of a type no SDK knows pass (a
    native turn sends them as they were stored: docs/api.md#native-turns; their own API took
    them)."""
    adapters = _adapters()
    content = m.get("content")
    shell = {**m, "content": content if isinstance(content, str) else []}
    problems = [_check(adapters["anthropic"], shell, where) or ""]
    adapter = adapters["system" if m.get("role") == "system" else "block"]
    for j, block in enumerate(content if isinstance(content, list) else ()):
        if isinstance(block, dict) and block.get("type") != UNKNOWN_BLOCK:
            problems.append(_check(adapter, block, f"{where}.content[{j}]") or "")
    return problems


def sdk_problems(answer: dict[str, Any]) -> list[str]:
    """The answer checked against its own SDK's types: Anthropic `MessageParam` (user,
    assistant and mid-conversation system turns) and the `system` text blocks; OpenAI
    Responses input items and Chat message params; google-genai `Content` and `Tool`
    (`_gemini_problems`). Blocks, items or part fields of a type no SDK knows pass
    (a native turn keeps them: docs/api.md#native-turns)."""
    adapters = _adapters()
    problems: list[str] = []
    if answer["format"] == "anthropic":
        for i, block in enumerate(answer.get("system") or ()):
            problems.append(_check(adapters["system"], block, f"system[{i}]") or "")
        for i, m in enumerate(answer["messages"]):
            problems += _anthropic_turn(m, f"messages[{i}]")
    elif answer["format"] == "gemini":
        problems += _gemini_problems(answer)
    elif answer["format"] == "responses":
        if not isinstance(answer["instructions"], str | None):
            problems.append("instructions is not a string")
        for i, item in enumerate(answer["input"]):
            if item.get("type") != UNKNOWN_ITEM:
                problems.append(_check(adapters["responses"], item, f"input[{i}]") or "")
    else:
        for i, m in enumerate(answer["messages"]):
            problems.append(_check(adapters["openai"], m, f"messages[{i}]") or "")
    return [p for p in problems if p]


def _gemini_problems(answer: dict[str, Any]) -> list[str]:
    from google.genai import types

    problems: list[str] = []
    named = (
        [("system_instruction", answer["system_instruction"])]
        if answer["system_instruction"]
        else []
    )
    named += [(f"contents[{i}]", c) for i, c in enumerate(answer["contents"])]
    for where, posted in named:
        parts = [{k: v for k, v in p.items() if k != UNKNOWN_FIELD} for p in posted["parts"]]
        try:
            types.Content.model_validate({**posted, "parts": parts})
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            problems.append(f"{where}: {first['msg']} at {first['loc']}")
    for i, tool in enumerate(answer["tools"]):
        try:
            types.Tool.model_validate(tool)
        except pydantic.ValidationError as exc:
            problems.append(f"tools[{i}]: {exc.errors()[0]['msg']}")
    return problems
