"""A three-step tool loop for each vendor, recorded with `client.messages.record`: the
model thinks and calls a tool twice, then answers; each response is the vendor SDK's own
object, recorded as it is, and the tool results the agent adds go in with `format=`.

Sends nothing: each vendor's client gets a transport that answers canned responses
(what the API returns) and keeps what it was sent. Drop `http_client=…` /
`http_options=…` to call the vendors. Afterwards, the conversation is read in every
format: in its own, the model got its reasoning back; in the others, no opaque state.

    CONTEXTQ_API_URL=… CONTEXTQ_API_KEY=cq_… python examples/record_tool_loops.py [formats…]
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from typing import Any

import httpx

from contextq import Client

FORMATS = ("openai", "anthropic", "responses", "gemini")
SIGS = ["EqQBCkgIARABGAIiQLtB0gZ2", "ErUBCkYIBRgCIkDd2Zs9n7tq"]
ENCRYPTED = ["gAAAAABpZ3Jvd3RoX2VuYzE=", "gAAAAABpZ3Jvd3RoX2VuYzI="]
GEMINI_SIGS = [base64.b64encode(f"gemini step {n}".encode()).decode() for n in (1, 2)]
OPAQUE = (*SIGS, *ENCRYPTED, *GEMINI_SIGS)
MODELS = {
    "openai": "gpt-4o",
    "anthropic": "claude-opus-4-7",
    "responses": "gpt-5.5",
    "gemini": "gemini-3-pro-preview",
}
TOOLS = [
    {
        "name": "lookup",
        "description": "Look a date up in the release tracker.",
        "input_schema": {"type": "object", "properties": {"what": {"type": "string"}}},
    }
]
FACTS = {"release": "Friday", "freeze": "Thursday"}
QUESTION = "When do we ship, and when is the freeze?"
ANSWER = "We ship on Friday; the freeze is on Thursday."


def canned(answers: list[dict[str, Any]], sent: list[dict[str, Any]]) -> Callable[[Any], Any]:
    """A vendor endpoint: keeps each request's body, answers the next canned response."""

    def answer(request: Any) -> dict[str, Any]:
        sent.append(json.loads(request.content))
        return answers[len(sent) - 1]

    return answer


# ---------------------------------------------------------------- Anthropic


def anthropic_answers() -> list[dict[str, Any]]:
    def message(n: int, stop: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        usage = {"input_tokens": 100, "output_tokens": 20}
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": MODELS["anthropic"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def step(n: int, what: str) -> dict[str, Any]:
        thinking = {"type": "thinking", "thinking": "", "signature": SIGS[n]}
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "lookup", "input": {"what": what}}
        return message(n, "tool_use", [thinking, call])

    return [
        step(0, "release"),
        step(1, "freeze"),
        message(2, "end_turn", [{"type": "text", "text": ANSWER}]),
    ]


def anthropic_loop(client: Client, conv_id: str, sent: list[dict[str, Any]]) -> None:
    import httpx2  # noqa: PLC0415 - the Anthropic SDK's HTTP client
    from anthropic import Anthropic  # noqa: PLC0415 - each loop needs only its own vendor's SDK

    respond = canned(anthropic_answers(), sent)
    http = httpx2.Client(
        transport=httpx2.MockTransport(lambda r: httpx2.Response(200, json=respond(r)))
    )
    claude = Anthropic(api_key="offline", http_client=http)
    client.messages.record(conv_id, {"role": "user", "content": QUESTION}, format="anthropic")
    while True:
        response = claude.messages.create(
            **client.chat_kwargs(conv_id, format="anthropic", max_tokens=4096)
        )
        client.messages.record(conv_id, response)
        calls = [b for b in response.content if b.type == "tool_use"]
        if not calls:
            return
        results = [
            {"type": "tool_result", "tool_use_id": c.id, "content": FACTS[c.input["what"]]}
            for c in calls
        ]
        client.messages.record(conv_id, {"role": "user", "content": results}, format="anthropic")


# ---------------------------------------------------------------- OpenAI Responses


def responses_answers() -> list[dict[str, Any]]:
    def response(n: int, output: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": 1767225600,
            "status": "completed",
            "model": MODELS["responses"],
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }

    def step(n: int, what: str) -> dict[str, Any]:
        reasoning = {
            "type": "reasoning",
            "id": f"rs_{n}",
            "summary": [],
            "encrypted_content": ENCRYPTED[n],
        }
        call = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": "lookup",
            "arguments": json.dumps({"what": what}),
            "status": "completed",
        }
        return response(n, [reasoning, call])

    text = {"type": "output_text", "text": ANSWER, "annotations": []}
    message = {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "status": "completed",
        "content": [text],
    }
    return [step(0, "release"), step(1, "freeze"), response(2, [message])]


def responses_loop(client: Client, conv_id: str, sent: list[dict[str, Any]]) -> None:
    from openai import OpenAI  # noqa: PLC0415 - each loop needs only its own vendor's SDK

    respond = canned(responses_answers(), sent)
    http = httpx.Client(
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json=respond(r)))
    )
    llm = OpenAI(api_key="offline", http_client=http)
    question = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": QUESTION}],
    }
    client.messages.record(conv_id, question, format="responses")
    while True:
        response = llm.responses.create(**client.chat_kwargs(conv_id, format="responses"))
        client.messages.record(conv_id, response)
        calls = [i for i in response.output if i.type == "function_call"]
        if not calls:
            return
        outputs = [
            {
                "type": "function_call_output",
                "call_id": c.call_id,
                "output": FACTS[json.loads(c.arguments)["what"]],
            }
            for c in calls
        ]
        client.messages.record(conv_id, outputs, format="responses")


# ---------------------------------------------------------------- Gemini


def gemini_answers() -> list[dict[str, Any]]:
    def response(parts: list[dict[str, Any]]) -> dict[str, Any]:
        candidate = {
            "content": {"role": "model", "parts": parts},
            "finishReason": "STOP",
            "index": 0,
        }
        return {"candidates": [candidate], "modelVersion": MODELS["gemini"]}

    def step(n: int, what: str) -> dict[str, Any]:
        thought = {"text": f"Look up the {what}.", "thought": True}
        call = {
            "functionCall": {"name": "lookup", "args": {"what": what}},
            "thoughtSignature": GEMINI_SIGS[n],
        }
        return response([thought, call])

    return [step(0, "release"), step(1, "freeze"), response([{"text": ANSWER}])]


def gemini_loop(client: Client, conv_id: str, sent: list[dict[str, Any]]) -> None:
    from google import genai  # noqa: PLC0415 - each loop needs only its own vendor's SDK
    from google.genai import types  # noqa: PLC0415 - each loop needs only its own vendor's SDK

    respond = canned(gemini_answers(), sent)
    http = httpx.Client(
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json=respond(r)))
    )
    gemini = genai.Client(api_key="offline", http_options=types.HttpOptions(httpx_client=http))
    question = types.Content(role="user", parts=[types.Part(text=QUESTION)])
    client.messages.record(conv_id, question, format="gemini")
    while True:
        response = gemini.models.generate_content(**client.chat_kwargs(conv_id, format="gemini"))
        client.messages.record(conv_id, response)
        calls = response.function_calls or []
        if not calls:
            return
        parts = [
            types.Part.from_function_response(
                name=c.name or "", response={"output": FACTS[(c.args or {})["what"]]}
            )
            for c in calls
        ]
        client.messages.record(conv_id, types.Content(role="user", parts=parts), format="gemini")


LOOPS = {"anthropic": anthropic_loop, "responses": responses_loop, "gemini": gemini_loop}


def reasoning_sent(body: dict[str, Any]) -> int:
    """The opaque reasoning state in one request: signatures and encrypted content."""
    text = json.dumps(body)
    return sum(text.count(value) for value in OPAQUE)


def main(formats: tuple[str, ...]) -> None:
    with Client() as client:  # CONTEXTQ_API_URL and CONTEXTQ_API_KEY
        for vendor, loop in LOOPS.items():
            conv = client.conversations.create(
                model=MODELS[vendor], tools=TOOLS, title=f"{vendor} loop"
            )
            sent: list[dict[str, Any]] = []
            loop(client, conv.id, sent)
            rows = list(client.messages.iter(conv.id))
            natively = {r.native.format for r in rows if r.native}
            print(
                f"{vendor}: {len(sent)} model calls, {len(rows)} messages stored, "
                f"natively as {sorted(natively)}"
            )
            print(
                f"  reasoning sent back to the model, by call: {[reasoning_sent(b) for b in sent]}"
            )
            for fmt in formats:
                context = client.context.get(conv.id, model=MODELS[fmt], format=fmt)  # type: ignore[arg-type]
                foreign = reasoning_sent(context.model_dump()) if fmt != vendor else "-"
                print(
                    f"  as {fmt}: {len(context.turns)} turns, {context.token_count} tokens, "
                    f"answer kept: {ANSWER in json.dumps(context.turns)}, "
                    f"other vendor's state: {foreign}"
                )


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or FORMATS)
