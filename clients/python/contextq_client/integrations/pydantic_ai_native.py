"""PydanticAI's model turns as a vendor's own turns, and a context in that vendor's
format as PydanticAI messages (docs/sdk.md: `ThinkingPart`s survive the round trip).

- **anthropic**: a `ModelResponse` → one assistant MessageParam: a `ThinkingPart` of
  Anthropic with its signature → a `thinking` block (`id` "redacted_thinking": a
  `redacted_thinking` block, its data in `signature`, as PydanticAI records it), text →
  `text`, a tool call → `tool_use`.
- **responses**: → Responses output items: OpenAI's `ThinkingPart`s of one `id` → one
  `reasoning` item (each part one summary, the signature its `encrypted_content`, raw
  content from `provider_details`), text → an assistant `message` (its `id` and `phase`),
  a tool call → `function_call` (`id`, `call_id`).
- **gemini** (`pydantic_ai_gemini`): → one `model` Content, each part's Gemini
  signature → `thoughtSignature`.

Reasoning of another provider, or unsigned, has no native place: it is left out (never
sent as text). The way back builds the same parts with the vendor's `provider_name`,
so PydanticAI's model sends them to the API as they came.
"""

from __future__ import annotations

import json
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


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and "text" in p]
        return "\n".join(texts)
    return json.dumps(content, default=str)


def _signed_by(part: ThinkingPart, provider: str) -> bool:
    return bool(part.signature) and part.provider_name == provider


class Requests:
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


def _anthropic_user(requests: Requests, content: Any) -> None:
    if isinstance(content, str):
        requests.add(UserPromptPart(content))
        return
    run: list[Json] = []
    for block in [*content, {"type": "tool_result"}]:  # a sentinel closes the last run
        if block.get("type") != "tool_result":
            run.append(block)
            continue
        if run:
            requests.add(UserPromptPart(text_of(run)))
            run = []
        if "tool_use_id" in block:
            requests.tool_return(block["tool_use_id"], text_of(block.get("content", "")))


def from_anthropic(context: Context, provider: str = "anthropic") -> list[ModelMessage]:
    """A `format=anthropic` context as PydanticAI messages (`system` first)."""
    requests = Requests()
    for block in context.system or ():
        requests.add(SystemPromptPart(block.get("text", "")))
    for turn in context.messages or ():
        if turn["role"] == "assistant":
            requests.response(_anthropic_parts(turn["content"], provider), provider)
        elif turn["role"] == "system":
            requests.add(SystemPromptPart(text_of(turn["content"])))
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


def _outputtext_of(items: list[Json], part: TextPart) -> None:
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
            _outputtext_of(items, part)
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
    requests = Requests()
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
            requests.tool_return(item["call_id"], text_of(item.get("output", "")))
        elif item.get("role") == "user":
            requests.add(UserPromptPart(text_of(item.get("content"))))
        elif item.get("role") in INPUT_ROLES:
            requests.add(SystemPromptPart(text_of(item.get("content"))))
    return requests.done()
