"""PydanticAI's model turns as a vendor's own turns, and a context in that vendor's
format as PydanticAI messages (SPEC §12: `ThinkingPart`s survive the round trip).

- **anthropic**: a `ModelResponse` → one assistant MessageParam: a `ThinkingPart` of
  Anthropic with its signature → a `thinking` block (`id` "redacted_thinking": a
  `redacted_thinking` block, its data in `signature`, as PydanticAI records it), text →
  `text`, a tool call → `tool_use`.
- **responses**: → Responses output items: OpenAI's `ThinkingPart`s of one `id` → one
  `reasoning` item (each part one summary, the signature its `encrypted_content`, raw
  content from `provider_details`), text → an assistant `message` (its `id` and `phase`),
  a tool call → `function_call` (`id`, `call_id`).
- **gemini**: → one `model` Content: thought text → `{"text", "thought": true}`, text,
  tool calls → `functionCall` (with the call's id); each part's Gemini signature
  (`provider_details["thought_signature"]`, as PydanticAI keeps it) → `thoughtSignature`.

Reasoning of another provider, or unsigned, has no native place: it is left out (never
sent as text). The way back builds the same parts with the vendor's `provider_name`,
so PydanticAI's model sends them to the API as they came.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from contextq_client.models import Context

Json = dict[str, Any]
# PydanticAI's ids of Claude's redacted thinking (AnthropicModel, BedrockConverseModel)
REDACTED_IDS = frozenset({"redacted_thinking", "redacted_content"})
SIGNATURE_KEY = "thought_signature"  # Gemini's, in a part's provider_details (base64)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and "text" in p]
        return "\n".join(texts)
    return json.dumps(content, default=str)


def _signed_by(part: ThinkingPart, provider: str) -> bool:
    return bool(part.signature) and part.provider_name == provider


class _Requests:
    """Builds the message list: request parts gather until a response comes."""

    def __init__(self) -> None:
        self.out: list[ModelMessage] = []
        self.pending: list[ModelRequestPart] = []
        self.names: dict[str, str] = {}  # tool call id -> tool name

    def add(self, *parts: ModelRequestPart) -> None:
        self.pending.extend(parts)

    def response(self, parts: list[ModelResponsePart], provider: str) -> None:
        self.flush()
        for part in parts:
            if isinstance(part, ToolCallPart):
                self.names[part.tool_call_id] = part.tool_name
        self.out.append(ModelResponse(parts=parts, provider_name=provider))

    def tool_return(self, call_id: str, content: Any) -> None:
        self.add(ToolReturnPart(self.names.get(call_id, "tool"), content, call_id))

    def flush(self) -> None:
        if self.pending:
            self.out.append(ModelRequest(parts=self.pending))
            self.pending = []

    def done(self) -> list[ModelMessage]:
        self.flush()
        return self.out


# ---------------------------------------------------------------- anthropic


def anthropic_turn(message: ModelResponse, provider: str = "anthropic") -> Json | None:
    """The assistant MessageParam of a response (None when nothing of it is native)."""
    blocks: list[Json] = []
    for part in message.parts:
        if isinstance(part, ThinkingPart) and _signed_by(part, provider):
            if part.id in REDACTED_IDS:
                blocks.append({"type": "redacted_thinking", "data": part.signature})
            else:
                blocks.append(
                    {"type": "thinking", "thinking": part.content, "signature": part.signature}
                )
        elif isinstance(part, TextPart) and part.content:
            blocks.append({"type": "text", "text": part.content})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "input": part.args_as_dict(),
                }
            )
    return {"role": "assistant", "content": blocks} if blocks else None


def _anthropic_parts(content: Any, provider: str) -> list[ModelResponsePart]:
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[ModelResponsePart] = []
    for block in content:
        kind = block.get("type")
        if kind == "thinking":
            parts.append(
                ThinkingPart(
                    block["thinking"], signature=block["signature"], provider_name=provider
                )
            )
        elif kind == "redacted_thinking":
            parts.append(
                ThinkingPart(
                    "", id="redacted_thinking", signature=block["data"], provider_name=provider
                )
            )
        elif kind == "text":
            parts.append(TextPart(block["text"]))
        elif kind == "tool_use":
            parts.append(ToolCallPart(block["name"], block.get("input"), block["id"]))
    return parts


def _anthropic_user(requests: _Requests, content: Any) -> None:
    if isinstance(content, str):
        requests.add(UserPromptPart(content))
        return
    run: list[Json] = []
    for block in [*content, {"type": "tool_result"}]:  # a sentinel closes the last run
        if block.get("type") != "tool_result":
            run.append(block)
            continue
        if run:
            requests.add(UserPromptPart(_text(run)))
            run = []
        if "tool_use_id" in block:
            requests.tool_return(block["tool_use_id"], _text(block.get("content", "")))


def from_anthropic(context: Context, provider: str = "anthropic") -> list[ModelMessage]:
    """A `format=anthropic` context as PydanticAI messages (`system` first)."""
    requests = _Requests()
    for block in context.system or ():
        requests.add(SystemPromptPart(block.get("text", "")))
    for turn in context.messages or ():
        if turn["role"] == "assistant":
            requests.response(_anthropic_parts(turn["content"], provider), provider)
        elif turn["role"] == "system":
            requests.add(SystemPromptPart(_text(turn["content"])))
        else:
            _anthropic_user(requests, turn["content"])
    return requests.done()


# ---------------------------------------------------------------- responses


def _reasoning(items: list[Json], part: ThinkingPart) -> None:
    last = items[-1] if items else None
    if last is not None and last["type"] == "reasoning" and last["id"] == part.id:
        if part.content:
            last["summary"].append({"type": "summary_text", "text": part.content})
        if part.signature and "encrypted_content" not in last:
            last["encrypted_content"] = part.signature
        return
    summary = [{"type": "summary_text", "text": part.content}] if part.content else []
    item: Json = {"type": "reasoning", "id": part.id, "summary": summary}
    raw = (part.provider_details or {}).get("raw_content")
    if raw:
        item["content"] = [{"type": "reasoning_text", "text": text} for text in raw]
    if part.signature:
        item["encrypted_content"] = part.signature
    items.append(item)


def _output_text(items: list[Json], part: TextPart) -> None:
    text = {"type": "output_text", "text": part.content, "annotations": []}
    last = items[-1] if items else None
    if part.id and last is not None and last.get("type") == "message" and last["id"] == part.id:
        last["content"].append(text)
        return
    if not part.id:  # no item id to send back: the easy form
        items.append({"role": "assistant", "content": part.content})
        return
    item: Json = {"type": "message", "role": "assistant", "id": part.id, "status": "completed"}
    phase = (part.provider_details or {}).get("phase")
    if phase:
        item["phase"] = phase
    items.append({**item, "content": [text]})


def _function_call(part: ToolCallPart) -> Json:
    item: Json = {
        "type": "function_call",
        "call_id": part.tool_call_id,
        "name": part.tool_name,
        # the arguments as the model wrote them, when they are text
        "arguments": part.args if isinstance(part.args, str) else part.args_as_json_str(),
    }
    if part.id:
        item["id"] = part.id
    namespace = (part.provider_details or {}).get("namespace")
    if namespace:
        item["namespace"] = namespace
    return item


def responses_items(message: ModelResponse, provider: str = "openai") -> list[Json]:
    """The Responses output items of a response, in order."""
    items: list[Json] = []
    for part in message.parts:
        if isinstance(part, ThinkingPart) and part.id and part.provider_name == provider:
            _reasoning(items, part)
        elif isinstance(part, TextPart) and part.content:
            _output_text(items, part)
        elif isinstance(part, ToolCallPart):
            items.append(_function_call(part))
    while items and items[-1]["type"] == "reasoning":  # its API refuses reasoning last
        items.pop()
    return items


def _thinking_parts(item: Json, provider: str) -> list[ModelResponsePart]:
    """A reasoning item as PydanticAI makes it: one part per summary (the signature and
    raw content on the first), or one empty part when there is no summary."""
    texts = [s.get("text", "") for s in item.get("summary") or ()] or [""]
    raw = [c.get("text", "") for c in item.get("content") or ()]
    parts: list[ModelResponsePart] = []
    for n, text in enumerate(texts):
        first = n == 0
        details = {"raw_content": raw} if first and raw else None
        signature = item.get("encrypted_content") if first else None
        parts.append(
            ThinkingPart(
                text,
                id=item.get("id"),
                signature=signature,
                provider_name=provider,
                provider_details=details,
            )
        )
    return parts


def _output_parts(item: Json, provider: str) -> list[ModelResponsePart]:
    kind = item.get("type")
    if kind == "reasoning":
        return _thinking_parts(item, provider)
    if kind == "function_call":
        details = {"namespace": item["namespace"]} if item.get("namespace") else None
        call = ToolCallPart(item["name"], item["arguments"], item["call_id"], id=item.get("id"))
        call.provider_name, call.provider_details = provider, details
        return [call]
    if item.get("role") != "assistant":
        return []
    details = {"phase": item["phase"]} if item.get("phase") else None
    content = item.get("content")
    texts = [content] if isinstance(content, str) else [c.get("text", "") for c in content or ()]
    return [
        TextPart(t, id=item.get("id"), provider_name=provider, provider_details=details)
        for t in texts
        if t
    ]


INPUT_ROLES = ("user", "system", "developer")


def from_responses(context: Context, provider: str = "openai") -> list[ModelMessage]:
    """A `format=responses` context as PydanticAI messages (`instructions` first); each
    run of output items is one response."""
    requests = _Requests()
    if context.instructions:
        requests.add(SystemPromptPart(context.instructions))
    run: list[ModelResponsePart] | None = None
    for item in [*(context.input or ()), {"type": "end"}]:  # a sentinel closes the last run
        is_input = item.get("role") in INPUT_ROLES or item.get("type") in (
            "function_call_output",
            "end",
        )
        if not is_input:
            run = [*(run or []), *_output_parts(item, provider)]
            continue
        if run is not None:
            requests.response(run, provider)
            run = None
        if item.get("type") == "function_call_output":
            requests.tool_return(item["call_id"], _text(item.get("output", "")))
        elif item.get("role") == "user":
            requests.add(UserPromptPart(_text(item.get("content"))))
        elif item.get("role") in INPUT_ROLES:
            requests.add(SystemPromptPart(_text(item.get("content"))))
    return requests.done()


# ---------------------------------------------------------------- gemini


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


def _gemini_user(requests: _Requests, content: Json, open_calls: list[tuple[str, str]]) -> None:
    run: list[Json] = []
    for node in [*(content.get("parts") or ()), {"functionResponse": None}]:  # sentinel
        answer = node.get("functionResponse", node.get("function_response", False))
        if answer is False:
            run.append(node)
            continue
        if run:
            requests.add(UserPromptPart(_text(run)))
            run = []
        if answer:
            call_id = answer.get("id") or next(
                (i for i, name in open_calls if name == answer.get("name")), answer.get("name")
            )
            open_calls[:] = [c for c in open_calls if c[0] != call_id]
            requests.tool_return(str(call_id), _response_content(answer.get("response")))


def from_gemini(context: Context, provider: str = "google-gla") -> list[ModelMessage]:
    """A `format=gemini` context as PydanticAI messages (`system_instruction` first). A
    call without an id gets `gemini-<name>-<n>`; a response without one answers the
    oldest open call of its name."""
    requests = _Requests()
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
