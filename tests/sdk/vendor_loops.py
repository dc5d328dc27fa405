"""Three-step tool loops as each vendor's SDK returns them, built offline with the SDKs'
own types (`anthropic.types.Message`, `openai.types.responses.Response`,
`google.genai.types.GenerateContentResponse`), for the `messages.record` tests.

A loop is a user question, then three model calls: two that think and call tools (the
agent answers each with tool results), and one that thinks and answers. `turns()` gives
the vendor JSON of every turn in order (what the conversation must hold natively, byte
for byte); `secrets` are the opaque strings (signatures, encrypted content, redacted
data) and `thoughts` the reasoning texts, neither of which may reach another vendor's
format.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

ANTHROPIC_SIGS = ("EqQBCkgIARABGAIiQLtB0gZ2m2p1d0bWxq4x", "ErUBCkYIBRgCIkDd2Zs9n7tq", "EpsCCkY2")
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
OPENAI_ENCRYPTED = ("gAAAAABpZ3Jvd3RoX2VuY3J5cHRlZA1", "gAAAAABpZ3Jvd3RoX2VuY3J5cHRlZA2")
GEMINI_SIG_BYTES = (b"\x0a\x8bgemini-step-1\xff", b"\x0a\x8bgemini-step-2\xfe", b"\x12final\x00")
GEMINI_SIGS = tuple(base64.b64encode(s).decode() for s in GEMINI_SIG_BYTES)
THOUGHTS = ("The release date is in the tracker.", "Check the freeze too.")
GEMINI_DUMMY = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="  # skip_thought_signature_validator
FINAL = "We ship on Friday; the API freezes on Thursday."
QUESTION = "When do we ship, and when is the freeze?"


@dataclass
class Step:
    """One model call: its response (an SDK object) and the tool results the agent
    records after it (None after the final answer)."""

    response: Any
    results: Any | None


@dataclass
class Loop:
    vendor: str  # the record format: anthropic | responses | gemini
    model: str
    user: Any
    steps: list[Step]
    dump: Callable[[Any], list[Any]]  # a response's turns as the vendor's own JSON
    secrets: tuple[str, ...]
    thoughts: tuple[str, ...] = THOUGHTS
    calls: list[str] = field(default_factory=list)  # the tool calls' ids (Gemini: names)

    def turns(self) -> list[Any]:
        """Every turn of the loop as the vendor's JSON (Anthropic MessageParams,
        Responses items, Gemini Contents), in order."""
        out: list[Any] = [*_listed(_plain(self.user))]
        for step in self.steps:
            out.extend(self.dump(step.response))
            if step.results is not None:
                out.extend(_listed(_plain(step.results)))
        return out


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def gemini_json(value: Any) -> Any:
    """A google-genai object as the REST API's JSON: camelCase, bytes in standard base64
    (the Gemini API's own alphabet; pydantic's JSON mode writes the URL-safe one)."""
    dumped = json.loads(value.model_dump_json(by_alias=True, exclude_none=True))

    def standard(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: base64.b64encode(base64.urlsafe_b64decode(v)).decode()
                if k in ("thoughtSignature", "data") and isinstance(v, str)
                else standard(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [standard(v) for v in node]
        return node

    return standard(dumped)


def _plain(value: Any) -> Any:
    """A google-genai object (turns the agent built) as REST JSON; dicts as they are."""
    if hasattr(value, "model_dump"):
        return gemini_json(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------- Anthropic


def _message(model: str, stop: str, blocks: list[Any]) -> Any:
    from anthropic.types import Message, Usage

    return Message(
        id="msg_01" + stop,
        type="message",
        role="assistant",
        model=model,
        content=blocks,
        stop_reason=stop,  # type: ignore[arg-type]
        stop_sequence=None,
        usage=Usage(input_tokens=120, output_tokens=40),
    )


def _tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


def anthropic_loop(model: str = "claude-opus-4-7") -> Loop:
    from anthropic.types import RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolUseBlock

    first = _message(
        model,
        "tool_use",
        [
            ThinkingBlock(type="thinking", thinking="", signature=ANTHROPIC_SIGS[0]),
            TextBlock(type="text", text="Let me look it up."),
            ToolUseBlock(type="tool_use", id="toolu_01", name="release", input={"p": "sdk"}),
        ],
    )
    second = _message(
        model,
        "tool_use",
        [
            ThinkingBlock(type="thinking", thinking=THOUGHTS[1], signature=ANTHROPIC_SIGS[1]),
            RedactedThinkingBlock(type="redacted_thinking", data=REDACTED),
            ToolUseBlock(type="tool_use", id="toolu_02", name="freeze", input={}),
            ToolUseBlock(type="tool_use", id="toolu_03", name="release", input={"p": "api"}),
        ],
    )
    third = _message(
        model,
        "end_turn",
        [
            ThinkingBlock(type="thinking", thinking=THOUGHTS[0], signature=ANTHROPIC_SIGS[2]),
            TextBlock(type="text", text=FINAL, citations=None),
        ],
    )
    results = [
        {"role": "user", "content": [_tool_result("toolu_01", "Friday")]},
        {
            "role": "user",
            "content": [_tool_result("toolu_02", "Thursday"), _tool_result("toolu_03", "Friday")],
        },
    ]
    return Loop(
        vendor="anthropic",
        model=model,
        user={"role": "user", "content": QUESTION},
        steps=[Step(first, results[0]), Step(second, results[1]), Step(third, None)],
        dump=lambda r: [{"role": "assistant", "content": r.to_dict(mode="json")["content"]}],
        secrets=(*ANTHROPIC_SIGS, REDACTED),
        calls=["toolu_01", "toolu_02", "toolu_03"],
    )


# ---------------------------------------------------------------- OpenAI Responses


def _response(model: str, n: int, output: list[dict[str, Any]]) -> Any:
    from openai.types.responses import Response

    return Response.model_validate(
        {
            "id": f"resp_0{n}",
            "object": "response",
            "created_at": 1767225600 + n,
            "model": model,
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )


def _call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_0{n}",
        "call_id": f"call_0{n}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def _reasoning(n: int, summary: list[str], encrypted: str | None) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": f"rs_0{n}",
        "summary": [{"type": "summary_text", "text": text} for text in summary],
        "encrypted_content": encrypted,
    }


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def responses_loop(model: str = "gpt-5.5") -> Loop:
    first = _response(
        model,
        1,
        [_reasoning(1, [THOUGHTS[0]], OPENAI_ENCRYPTED[0]), _call(1, "release", {"p": "sdk"})],
    )
    commentary = {
        "type": "message",
        "id": "msg_02",
        "role": "assistant",
        "status": "completed",
        "phase": "commentary",
        "content": [{"type": "output_text", "text": "Now the freeze.", "annotations": []}],
    }
    second = _response(
        model,
        2,
        [_reasoning(2, [THOUGHTS[1]], OPENAI_ENCRYPTED[1]), commentary, _call(2, "freeze", {})],
    )
    answer = {
        "type": "message",
        "id": "msg_03",
        "role": "assistant",
        "status": "completed",
        "phase": "final_answer",
        "content": [{"type": "output_text", "text": FINAL, "annotations": []}],
    }
    third = _response(model, 3, [_reasoning(3, [], None), answer])
    return Loop(
        vendor="responses",
        model=model,
        user={
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": QUESTION}],
        },
        steps=[
            Step(first, [_output("call_01", "Friday")]),
            Step(second, [_output("call_02", "Thursday")]),
            Step(third, None),
        ],
        dump=lambda r: list(r.to_dict(mode="json")["output"]),
        secrets=OPENAI_ENCRYPTED,
        calls=["call_01", "call_02"],
    )


# ---------------------------------------------------------------- Gemini


def _generated(model: str, parts: list[Any]) -> Any:
    from google.genai import types

    return types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(role="model", parts=parts),
                finish_reason=types.FinishReason.STOP,
                index=0,
            )
        ],
        model_version=model,
        response_id="gemini-response",
    )


def gemini_loop(model: str = "gemini-3-pro-preview") -> Loop:
    from google.genai import types

    def call(name: str, args: dict[str, Any], sig: bytes | None = None) -> Any:
        return types.Part(
            function_call=types.FunctionCall(name=name, args=args), thought_signature=sig
        )

    def answer(name: str, output: str) -> Any:
        return types.Part(
            function_response=types.FunctionResponse(name=name, response={"output": output})
        )

    first = _generated(
        model,
        [
            types.Part(text=THOUGHTS[0], thought=True),
            call("release", {"p": "sdk"}, GEMINI_SIG_BYTES[0]),
        ],
    )
    second = _generated(  # parallel calls: the signature on the first only
        model,
        [
            types.Part(text=THOUGHTS[1], thought=True),
            call("freeze", {}, GEMINI_SIG_BYTES[1]),
            call("release", {"p": "api"}),
        ],
    )
    third = _generated(model, [types.Part(text=FINAL, thought_signature=GEMINI_SIG_BYTES[2])])
    return Loop(
        vendor="gemini",
        model=model,
        user=types.Content(role="user", parts=[types.Part(text=QUESTION)]),
        steps=[
            Step(first, types.Content(role="user", parts=[answer("release", "Friday")])),
            Step(
                second,
                types.Content(
                    role="user", parts=[answer("freeze", "Thursday"), answer("release", "Friday")]
                ),
            ),
            Step(third, None),
        ],
        dump=lambda r: [gemini_json(r.candidates[0].content)],
        secrets=GEMINI_SIGS,
        calls=["release", "freeze", "release"],
    )


LOOPS: dict[str, Callable[[], Loop]] = {
    "anthropic": anthropic_loop,
    "responses": responses_loop,
    "gemini": gemini_loop,
}


# ---------------------------------------------------------------- recording, checks


def record_loop(client: Any, loop: Loop) -> str:
    """The loop as an agent records it: the question, then one line per model call and
    one per batch of tool results."""
    conv = client.conversations.create(model=loop.model, title=f"{loop.vendor} loop")
    client.messages.record(conv.id, loop.user, format=loop.vendor)  # type: ignore[arg-type]
    for step in loop.steps:
        client.messages.record(conv.id, step.response)
        if step.results is not None:
            client.messages.record(conv.id, step.results, format=loop.vendor)  # type: ignore[arg-type]
    return conv.id


def check_no_foreign_state(loop: Loop, kwargs: dict[str, Any]) -> None:
    """No signature, encrypted content or redacted data of the loop's vendor, no
    reasoning block, item or thought part, and its reasoning never as text. (Read as
    Gemini, a current call may carry the documented dummy signature, nothing else.)"""
    sent = dumps(kwargs)
    for secret in (*loop.secrets, *loop.thoughts):
        assert secret not in sent, secret
    for marker in ('"type":"thinking"', '"type":"redacted_thinking"', '"type":"reasoning"'):
        assert marker not in sent, marker
    assert '"thought":true' not in sent and '"encrypted_content"' not in sent
    assert '"signature"' not in sent
    signatures = set(re.findall(r'"thought_?[sS]ignature":"([^"]*)"', sent))
    assert signatures <= {GEMINI_DUMMY}, signatures


def tool_pairs(fmt: str, kwargs: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The tool calls of a context in `fmt`, and what its results answer, in order (ids;
    Gemini's names, its ids being optional)."""
    if fmt == "openai":
        messages = kwargs["messages"]
        calls = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
        return calls, [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    if fmt == "anthropic":
        blocks = [
            b for m in kwargs["messages"] if isinstance(m["content"], list) for b in m["content"]
        ]
        calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
        return calls, [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    if fmt == "responses":
        items = kwargs["input"]
        calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
        return calls, [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    parts = [p for c in kwargs["contents"] for p in c["parts"]]
    calls = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
    return calls, [p["functionResponse"]["name"] for p in parts if "functionResponse" in p]


def check_tool_loop(loop: Loop, fmt: str, kwargs: dict[str, Any]) -> None:
    """Every call of the loop is in the context, each answered by its result."""
    calls, answered = tool_pairs(fmt, kwargs)
    assert calls == answered, (calls, answered)
    assert len(calls) == len(loop.calls), calls


def rejoin(vendor: str, payloads: list[Any]) -> list[Any]:
    """Stored rows' native slices put back together: consecutive slices of one role
    merge into one turn (Anthropic content blocks, Gemini parts); Responses items are
    flat."""
    if vendor == "responses":
        return [item for payload in payloads for item in payload]
    key = "content" if vendor == "anthropic" else "parts"
    turns: list[dict[str, Any]] = []
    for payload in payloads:
        last = turns[-1] if turns else None
        same_turn = last is not None and last["role"] == payload["role"] == "user"
        if same_turn and isinstance(last[key], list) and isinstance(payload[key], list):
            last[key] = [*last[key], *payload[key]]
            continue
        turns.append(dict(payload))
    return turns


def dumps(value: Any) -> str:
    """JSON with keys in their order: equal strings are the same JSON, byte for byte."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def validate(fmt: str, kwargs: dict[str, Any]) -> None:
    """`chat_kwargs` of `fmt` validate as the vendor SDK's own request parameter types."""
    if fmt == "openai":
        from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

        TypeAdapter(list[ChatCompletionMessageParam]).validate_python(kwargs["messages"])
        TypeAdapter(list[ChatCompletionToolParam]).validate_python(kwargs.get("tools", []))
    elif fmt == "anthropic":
        from anthropic.types import MessageParam, TextBlockParam, ToolParam

        TypeAdapter(list[MessageParam]).validate_python(kwargs["messages"])
        TypeAdapter(list[TextBlockParam]).validate_python(kwargs.get("system", []))
        TypeAdapter(list[ToolParam]).validate_python(kwargs.get("tools", []))
    elif fmt == "responses":
        from openai.types.responses import FunctionToolParam, ResponseInputParam

        TypeAdapter(ResponseInputParam).validate_python(kwargs["input"])
        TypeAdapter(list[FunctionToolParam]).validate_python(kwargs.get("tools", []))
        assert isinstance(kwargs.get("instructions", ""), str)
    else:
        from google.genai import types

        for content in kwargs["contents"]:
            types.Content.model_validate(content)
        types.GenerateContentConfig.model_validate(kwargs["config"])
