"""What the invariants know without the assembly: an answer read as a client reads it.

- `recount`: SPEC §3 as clarified — the JSON serialisation of each message as sent,
  nothing added (no per-message framing, no reply priming); a node whose `content` is a
  list counts as itself with `content: []` plus each element; an image by its provider's
  published formula for its decoded pixel size; an audio part by its decoded duration;
  Anthropic's `system` blocks as nodes; a calibrated answer (a closed tokenizer) from its
  own `token_count_encoding` and `token_count_factors`. It is `tests.support.recount`,
  shared with the API tests: one recount, read from the answer alone.
- `hard_room` / `budget`: SPEC §4's formulas from the model catalogue and the options.
- `sdk_problems`: every message checked against the installed `openai` / `anthropic`
  SDK's own parameter types (pydantic over their TypedDicts, strictly, extra keys caught):
  Chat messages, Messages API turns, Responses input items; google-genai's `Content`
  (a pydantic model that forbids unknown keys) for Gemini's contents.
- `Sent`: what an answer holds, found by the markers every generated message starts with.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pydantic

from contextq.catalog import resolve_model
from contextq.history import Message
from contextq.settings import Settings
from tests.engine.assembly.harness.files import wav_seconds
from tests.engine.assembly.harness.text import MARKER
from tests.support.recount import Counter, json_tokens
from tests.support.recount import recount as shared_recount

# ---------------------------------------------------------------- counting


def recount(answer: dict[str, Any]) -> int:
    """SPEC §3's count of the list as sent (`tests.support.recount`, the one recount the
    API tests use too): exact in the model's encoding, or calibrated as the answer says;
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
    """SPEC §4: hard room = context_limit - max_output_tokens - tool definitions (a model
    with a separate input limit never gets more); budget = hard x budget_percentage -
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
    from anthropic.types import TextBlockParam
    from anthropic.types.assistant_message_param import AssistantMessageParam
    from anthropic.types.user_message_param import UserMessageParam
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.responses import ResponseInputItemParam

    return {
        "openai": pydantic.TypeAdapter(ChatCompletionMessageParam),
        "responses": pydantic.TypeAdapter(ResponseInputItemParam),
        "user": pydantic.TypeAdapter(UserMessageParam),
        "assistant": pydantic.TypeAdapter(AssistantMessageParam),
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


def sdk_problems(answer: dict[str, Any]) -> list[str]:
    adapters = _adapters()
    problems: list[str] = []
    if answer["format"] == "anthropic":
        for i, block in enumerate(answer.get("system") or ()):
            problems.append(_check(adapters["system"], block, f"system[{i}]") or "")
        for i, m in enumerate(answer["messages"]):
            adapter = adapters.get(m.get("role", ""))
            if adapter is None or m.get("role") == "system":
                problems.append(f"messages[{i}]: role {m.get('role')!r} is not user/assistant")
                continue
            problems.append(_check(adapter, m, f"messages[{i}]") or "")
    elif answer["format"] == "gemini":
        problems += _gemini_problems(answer)
    elif answer["format"] == "responses":
        if not isinstance(answer["instructions"], str | None):
            problems.append("instructions is not a string")
        for i, item in enumerate(answer["input"]):
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
    for where, content in named:
        try:
            types.Content.model_validate(content)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            problems.append(f"{where}: {first['msg']} at {first['loc']}")
    for i, tool in enumerate(answer["tools"]):
        try:
            types.Tool.model_validate(tool)
        except pydantic.ValidationError as exc:
            problems.append(f"tools[{i}]: {exc.errors()[0]['msg']}")
    return problems


# ---------------------------------------------------------------- what was sent


@dataclass(slots=True)
class Sent:
    """An answer's content, found by marker, call id and file name."""

    texts: dict[int, list[str]] = field(default_factory=dict)  # seq → text(s) sent for it
    calls: dict[str, str] = field(default_factory=dict)  # call id → tool name
    results: dict[str, list[str]] = field(default_factory=dict)  # call id → result texts
    documents: list[dict[str, Any]] = field(default_factory=list)  # documents JSON entries
    document_texts: list[str] = field(default_factory=list)  # each documents JSON as sent
    labels: list[tuple[str, str]] = field(default_factory=list)  # (label text, next part type)
    system: list[str] = field(default_factory=list)  # system texts, in order

    def text(self, seq: int) -> str | None:
        found = self.texts.get(seq)
        return found[0] if found else None

    def result(self, m: Message) -> str | None:
        """The text sent for tool result `m` (recorded sessions reuse call ids: then the
        one that starts with its marker, or the stub naming its id)."""
        found = self.results.get(str(m.tool_call_id)) or []
        mine = [t for t in found if t.startswith(f"[#m{m.seq}]")]
        if not mine:
            unmarked = [t for t in found if not MARKER.match(t)]
            named = [t for t in unmarked if f"/{m.id}." in t]
            mine = named or (unmarked if len(found) == 1 else [])
        return mine[0] if mine else None


def _is_text(part: dict[str, Any]) -> bool:
    if "type" not in part:  # a Gemini part: one key says what it is
        return "text" in part
    return part.get("type") in ("text", "input_text")


def _kind(part: dict[str, Any]) -> str:
    return str(part.get("type") or next(iter(part), ""))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content or () if _is_text(p))


# a preview's note names the message (contextq.assembly.shrink): its head may have lost
# the marker, or have no body at all
NAMED_PREVIEW = re.compile(r"in this conversation's history as message m(\d+)\b")


def _add_text(sent: Sent, text: str) -> None:
    match = MARKER.match(text) or NAMED_PREVIEW.search(text)
    if match:
        sent.texts.setdefault(int(match.group(1)), []).append(text)
    start = text.find('{"documents": [')
    if start >= 0 and (start == 0 or text[start - 2 : start] == "\n\n"):
        with contextlib.suppress(ValueError, KeyError, TypeError):
            sent.documents += json.loads(text[start:])["documents"]
            sent.document_texts.append(text[start:])


def _parts(sent: Sent, parts: list[dict[str, Any]]) -> None:
    for j, part in enumerate(parts):
        if _is_text(part):
            text = str(part.get("text", ""))
            _add_text(sent, text)
            if text.startswith("Attached "):
                after = _kind(parts[j + 1]) if j + 1 < len(parts) else ""
                sent.labels.append((text, after))
            elif text.startswith("[Attached "):
                sent.labels.append((text, "line"))


def _read_responses(answer: dict[str, Any]) -> Sent:
    sent = Sent()
    if answer["instructions"] is not None:
        sent.system.append(answer["instructions"])
        _add_text(sent, answer["instructions"])
    for item in answer["input"]:
        kind = item.get("type")
        if kind == "function_call":
            sent.calls[item["call_id"]] = item["name"]
        elif kind == "function_call_output":
            text = _text_of(item["output"])
            sent.results.setdefault(item["call_id"], []).append(text)
            _add_text(sent, text)
        else:
            content = item.get("content")
            if item.get("role") == "system":
                sent.system.append(_text_of(content))
            if isinstance(content, str):
                _add_text(sent, content)
            elif isinstance(content, list):
                _parts(sent, content)
    return sent


def _read_gemini(answer: dict[str, Any]) -> Sent:
    sent = Sent()
    system = answer["system_instruction"] or {"parts": []}
    sent.system = [str(p.get("text", "")) for p in system["parts"]]
    for text in sent.system:
        _add_text(sent, text)
    for content in answer["contents"]:
        parts = content["parts"]
        _parts(sent, [p for p in parts if "functionCall" not in p and "functionResponse" not in p])
        for part in parts:
            if "functionCall" in part:
                sent.calls[part["functionCall"]["id"]] = part["functionCall"]["name"]
            elif "functionResponse" in part:
                made = part["functionResponse"]
                response = made["response"]
                text = str(response.get("output", response.get("error", "")))
                sent.results.setdefault(made["id"], []).append(text)
                _add_text(sent, text)
    return sent


def read_sent(answer: dict[str, Any], tool_id: Callable[[str], str] = lambda s: s) -> Sent:
    if answer["format"] == "responses":
        return _read_responses(answer)
    if answer["format"] == "gemini":
        return _read_gemini(answer)
    sent = Sent()
    if answer["format"] == "anthropic":
        sent.system = [b.get("text", "") for b in answer.get("system") or ()]
        for text in sent.system:
            _add_text(sent, text)
        for m in answer["messages"]:
            blocks = (
                m["content"]
                if isinstance(m["content"], list)
                else [{"type": "text", "text": m["content"]}]
            )
            _parts(sent, [b for b in blocks if b.get("type") != "tool_result"])
            for b in blocks:
                if b.get("type") == "tool_use":
                    sent.calls[b["id"]] = b["name"]
                elif b.get("type") == "tool_result":
                    text = _text_of(b.get("content", ""))
                    sent.results.setdefault(b["tool_use_id"], []).append(text)
                    _add_text(sent, text)
        return sent
    for m in answer["messages"]:
        content = m.get("content")
        if m["role"] == "system":
            sent.system.append(_text_of(content))
        if m["role"] == "tool":
            text = _text_of(content)
            sent.results.setdefault(m["tool_call_id"], []).append(text)
            _add_text(sent, text)
            continue
        for call in m.get("tool_calls") or ():
            sent.calls[call["id"]] = call["function"]["name"]
        if isinstance(content, str):
            _add_text(sent, content)
        elif isinstance(content, list):
            _parts(sent, content)
    return sent
