"""PydanticAI's model turns as Gemini `Content`s, and a `format=gemini` context as
PydanticAI messages (docs/sdk.md; `pydantic_ai_native` has Anthropic's and Responses').

A `ModelResponse` → one `model` Content: thought text → `{"text", "thought": true}`,
text, tool calls → `functionCall` (with the call's id); each part's Gemini signature
(`provider_details["thought_signature"]`, base64, as PydanticAI's GoogleModel keeps it)
→ `thoughtSignature` on that part. The way back builds the same parts and details with
the run's Google provider name, so GoogleModel sends each signature on its own part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)

from contextq_client.integrations.gemini_calls import answered_call
from contextq_client.integrations.pydantic_ai_native import Json, Requests, text_of
from contextq_client.models import Context

SIGNATURE_KEY = "thought_signature"  # Gemini's, in a part's provider_details (base64)


def _gemini_signature(part: Any, message: ModelResponse) -> str | None:
    provider = part.provider_name or message.provider_name or ""
    if not provider.startswith("google"):
        return None
    signature = (part.provider_details or {}).get(SIGNATURE_KEY)
    return signature if isinstance(signature, str) and signature else None


def _signed(node: Json, signature: str | None) -> Json:
    return {**node, "thoughtSignature": signature} if signature else node


def gemini_content(message: ModelResponse, provider: str = "google-gla") -> Json | None:
    """The `model` Content of a response (None when nothing of it is native)."""
    parts: list[Json] = []
    carried: str | None = None  # an older ThinkingPart.signature rides on the next part
    for part in message.parts:
        signature = _gemini_signature(part, message) if hasattr(part, "provider_details") else None
        signature, carried = signature or carried, None
        if isinstance(part, ThinkingPart):
            if part.signature and part.provider_name == provider:
                carried = part.signature
            if part.content:
                parts.append(_signed({"text": part.content, "thought": True}, signature))
        elif isinstance(part, TextPart) and (part.content or signature):
            parts.append(_signed({"text": part.content}, signature))
        elif isinstance(part, ToolCallPart):
            call = {"name": part.tool_name, "args": part.args_as_dict(), "id": part.tool_call_id}
            parts.append(_signed({"functionCall": call}, signature))
    return {"role": "model", "parts": parts} if parts else None


def _details(node: Json) -> dict[str, Any] | None:
    signature = node.get("thoughtSignature", node.get("thought_signature"))
    return {SIGNATURE_KEY: signature} if signature else None


def _gemini_model_parts(
    content: Json, provider: str, ids: Callable[[str], str]
) -> list[ModelResponsePart]:
    parts: list[ModelResponsePart] = []
    for node in content.get("parts") or ():
        details = _details(node)
        call = node.get("functionCall", node.get("function_call"))
        if call is not None:
            part: ModelResponsePart = ToolCallPart(
                call["name"], call.get("args"), call.get("id") or ids(call["name"])
            )
        elif node.get("thought") and "text" in node:
            part = ThinkingPart(node["text"])
        elif "text" in node:
            part = TextPart(node["text"])
        else:
            continue
        if details is not None or isinstance(part, ThinkingPart):
            part.provider_name = provider
        part.provider_details = details
        parts.append(part)
    return parts


def _response_content(response: Any) -> Any:
    if isinstance(response, dict) and len(response) == 1:
        (key,) = response
        if key in ("output", "result", "content", "return_value"):
            return response[key]
    return response


def _gemini_user(requests: Requests, content: Json, open_calls: list[tuple[str, str]]) -> None:
    run: list[Json] = []
    for node in [*(content.get("parts") or ()), {"functionResponse": None}]:  # sentinel
        answer = node.get("functionResponse", node.get("function_response", False))
        if answer is False:
            run.append(node)
            continue
        if run:
            requests.add(UserPromptPart(text_of(run)))
            run = []
        if answer:
            call_id = answered_call(answer, open_calls)
            requests.tool_return(str(call_id), _response_content(answer.get("response")))


def from_gemini(context: Context, provider: str = "google-gla") -> list[ModelMessage]:
    """A `format=gemini` context as PydanticAI messages (`system_instruction` first). A
    call without an id gets `gemini-<name>-<n>`; a response without one answers the
    oldest open call of its name."""
    requests = Requests()
    for node in (context.system_instruction or {}).get("parts") or ():
        requests.add(SystemPromptPart(node.get("text", "")))
    counts: Counter[str] = Counter()
    open_calls: list[tuple[str, str]] = []  # (id, name), oldest first

    def ids(name: str) -> str:
        counts[name] += 1
        return f"gemini-{name}-{counts[name]}"

    for content in context.contents or ():
        if content.get("role") == "model":
            parts = _gemini_model_parts(content, provider, ids)
            open_calls += [
                (p.tool_call_id, p.tool_name) for p in parts if isinstance(p, ToolCallPart)
            ]
            requests.response(parts, provider)
        else:
            _gemini_user(requests, content, open_calls)
    return requests.done()
