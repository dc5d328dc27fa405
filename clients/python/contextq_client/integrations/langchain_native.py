"""LangChain's `AIMessage`s as a vendor's own turns, and a context in that vendor's
format as LangChain messages (docs/sdk.md: reasoning content blocks survive the round trip).

An `AIMessage` carries reasoning in its `content` in the provider's shape or in
langchain-core's standard blocks; both are read:

- **anthropic**: `thinking` / `redacted_thinking` blocks (langchain-anthropic), standard
  `{"type": "reasoning", "reasoning", "extras": {"signature"}}` blocks (a reasoning block
  without a signature has no native place: left out, never sent as text), `text`,
  `tool_use` / standard `tool_call` blocks and `tool_calls` → one assistant MessageParam.
  Back: an `AIMessage` whose `content` holds the blocks as the Messages API returned
  them (what langchain-anthropic sends back as they are), with `tool_calls` and
  `response_metadata["model_provider"] = "anthropic"` (so `.content_blocks` reads them as
  standard reasoning blocks, the signature in `extras`).
- **responses**: reasoning blocks of langchain-openai's `responses/v1` content
  (`{"type": "reasoning", "id", "summary", "encrypted_content"}`) or standard ones (one
  per summary, the item's `id`), text blocks with their message `id`, `function_call`
  blocks and `tool_calls` → Responses output items; back in `responses/v1` content.
- **gemini**: `thinking` blocks with their `signature` (langchain-google-genai) or
  standard reasoning blocks, text (a signature in `extras`), `tool_calls` with the
  signatures langchain-google-genai keeps in `additional_kwargs
  ["__gemini_function_call_thought_signatures__"]` → one `model` Content; back the same.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from contextq_client.integrations.gemini_calls import answered_call
from contextq_client.models import Context

Json = dict[str, Any]
GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"
PROVIDERS = {"anthropic": "anthropic", "responses": "openai", "gemini": "google_genai"}


def _blocks(message: AIMessage) -> list[Json]:
    content = message.content
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]


def _signature(block: Json) -> Any:
    return block.get("signature") or (block.get("extras") or {}).get("signature")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b if isinstance(b, str) else str(b.get("text", ""))
            for b in content
            if isinstance(b, str) or "text" in b
        )
    return json.dumps(content, default=str)


# ---------------------------------------------------------------- anthropic


def _anthropic_thinking(block: Json) -> Json | None:
    """A signed thinking block: Anthropic's own, or a standard reasoning block."""
    signature = _signature(block)
    if not signature:
        return None
    text = block.get("thinking", "") if block["type"] == "thinking" else block.get("reasoning", "")
    return {"type": "thinking", "thinking": text, "signature": signature}


def _anthropic_block(block: Json) -> Json | None:
    kind = block.get("type")
    value = block.get("value")
    if kind == "non_standard" and isinstance(value, dict):
        block, kind = value, value.get("type")
    if kind in ("thinking", "reasoning"):
        return _anthropic_thinking(block)
    if kind == "redacted_thinking" and block.get("data"):
        return {"type": "redacted_thinking", "data": block["data"]}
    if kind == "text" and block.get("text"):
        return {"type": "text", "text": block["text"]}
    if kind in ("tool_use", "tool_call") and block.get("id"):
        arguments = block.get("input", block.get("args")) or {}
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": arguments}
    return None


def anthropic_turn(message: AIMessage) -> Json | None:
    """The assistant MessageParam of an `AIMessage` (None when nothing of it is native)."""
    blocks = [b for b in map(_anthropic_block, _blocks(message)) if b is not None]
    seen = {b["id"] for b in blocks if b["type"] == "tool_use"}
    for call in message.tool_calls:
        if call.get("id") and call["id"] not in seen:
            blocks.append(
                {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["args"]}
            )
    return {"role": "assistant", "content": blocks} if blocks else None


def _anthropic_ai(content: Any) -> AIMessage:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    calls = [
        {"id": b["id"], "name": b["name"], "args": b.get("input") or {}, "type": "tool_call"}
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    meta = {"model_provider": "anthropic"}
    return AIMessage(content=blocks, tool_calls=calls, response_metadata=meta)


def _anthropic_user(content: Any) -> list[BaseMessage]:
    if isinstance(content, str):
        return [HumanMessage(content)]
    out: list[BaseMessage] = []
    run: list[Json] = []
    for block in [*content, {"type": "tool_result"}]:  # a sentinel closes the last run
        if block.get("type") != "tool_result":
            run.append(block)
            continue
        if run:
            out.append(HumanMessage(_text(run)))
            run = []
        if "tool_use_id" in block:
            out.append(
                ToolMessage(_text(block.get("content", "")), tool_call_id=block["tool_use_id"])
            )
    return out


def from_anthropic(context: Context) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    system = "".join(b.get("text", "") for b in context.system or ())
    if system:
        out.append(SystemMessage(system))
    for turn in context.messages or ():
        if turn["role"] == "assistant":
            out.append(_anthropic_ai(turn["content"]))
        elif turn["role"] == "system":
            out.append(SystemMessage(_text(turn["content"])))
        else:
            out.extend(_anthropic_user(turn["content"]))
    return out


# ---------------------------------------------------------------- responses


def _reasoning(items: list[Json], block: Json) -> None:
    if "summary" in block:  # langchain-openai's responses/v1 block: the item itself
        keep = ("type", "id", "summary", "content", "encrypted_content")
        items.append({k: block[k] for k in keep if block.get(k) is not None})
        return
    extras = block.get("extras") or {}
    text = block.get("reasoning")
    last = items[-1] if items else None
    if last is not None and last["type"] == "reasoning" and last["id"] == block["id"]:
        if text:
            last["summary"].append({"type": "summary_text", "text": text})
        return
    item: Json = {"type": "reasoning", "id": block["id"], "summary": []}
    if text:
        item["summary"].append({"type": "summary_text", "text": text})
    if extras.get("encrypted_content"):
        item["encrypted_content"] = extras["encrypted_content"]
    items.append(item)


def _message_text(items: list[Json], block: Json) -> None:
    text = {"type": "output_text", "text": block["text"], "annotations": []}
    last = items[-1] if items else None
    mid = block.get("id")
    if mid and last is not None and last.get("type") == "message" and last.get("id") == mid:
        last["content"].append(text)
    elif mid:
        item: Json = {"type": "message", "role": "assistant", "id": mid, "status": "completed"}
        if block.get("phase"):
            item["phase"] = block["phase"]
        items.append({**item, "content": [text]})
    else:
        items.append({"role": "assistant", "content": block["text"]})


def _call_item(call_id: str, name: str, arguments: Any, item_id: Any) -> Json:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    item: Json = {"type": "function_call", "call_id": call_id, "name": name, "arguments": args}
    if item_id:
        item["id"] = item_id
    return item


def responses_items(message: AIMessage) -> list[Json]:
    items: list[Json] = []
    seen: set[str] = set()
    for block in _blocks(message):
        kind = block.get("type")
        if kind == "reasoning" and block.get("id"):
            _reasoning(items, block)
        elif kind == "text" and block.get("text"):
            _message_text(items, block)
        elif kind == "function_call" and block.get("call_id"):
            seen.add(block["call_id"])
            items.append(
                _call_item(block["call_id"], block["name"], block.get("arguments"), block.get("id"))
            )
    for call in message.tool_calls:
        call_id = call.get("id")
        if call_id and call_id not in seen:
            items.append(_call_item(call_id, call["name"], call["args"], None))
    while items and items[-1]["type"] == "reasoning":  # its API refuses reasoning last
        items.pop()
    return items


def _responses_ai(run: list[Json]) -> AIMessage:
    content: list[str | dict[Any, Any]] = []
    calls: list[Any] = []
    for item in run:
        kind = item.get("type")
        if kind == "reasoning":
            content.append(dict(item))
        elif kind == "function_call":
            content.append(dict(item))
            args = json.loads(item["arguments"] or "{}")
            calls.append(
                {"id": item["call_id"], "name": item["name"], "args": args, "type": "tool_call"}
            )
        elif item.get("role") == "assistant":
            texts = (
                item["content"]
                if isinstance(item["content"], list)
                else [{"text": item["content"]}]
            )
            for text in texts:
                block: Json = {"type": "text", "text": text.get("text", ""), "annotations": []}
                if item.get("id"):
                    block["id"] = item["id"]
                if item.get("phase"):
                    block["phase"] = item["phase"]
                content.append(block)
    meta = {"model_provider": "openai", "output_version": "responses/v1"}
    return AIMessage(content=content, tool_calls=calls, response_metadata=meta)


def from_responses(context: Context) -> list[BaseMessage]:
    out: list[BaseMessage] = [SystemMessage(context.instructions)] if context.instructions else []
    run: list[Json] = []
    for item in [*(context.input or ()), {"type": "end"}]:  # a sentinel closes the last run
        is_output = item.get("role") not in ("user", "system", "developer") and item.get(
            "type"
        ) not in ("function_call_output", "end")
        if is_output:
            run.append(item)
            continue
        if run:
            out.append(_responses_ai(run))
            run = []
        if item.get("type") == "function_call_output":
            out.append(ToolMessage(_text(item.get("output", "")), tool_call_id=item["call_id"]))
        elif item.get("role") == "user":
            out.append(HumanMessage(_text(item.get("content"))))
        elif item.get("role") in ("system", "developer"):
            out.append(SystemMessage(_text(item.get("content"))))
    return out


# ---------------------------------------------------------------- gemini


def _signed(node: Json, signature: Any) -> Json:
    return {**node, "thoughtSignature": signature} if signature else node


def gemini_content(message: AIMessage) -> Json | None:
    signatures = message.additional_kwargs.get(GEMINI_SIGNATURES) or {}
    parts: list[Json] = []
    for block in _blocks(message):
        kind = block.get("type")
        if kind in ("thinking", "reasoning"):
            text = block.get("thinking", block.get("reasoning", ""))
            parts.append(_signed({"text": text, "thought": True}, _signature(block)))
        elif kind == "text" and (block.get("text") or _signature(block)):
            parts.append(_signed({"text": block["text"]}, _signature(block)))
    for call in message.tool_calls:
        function: Json = {"name": call["name"], "args": call["args"]}
        if call.get("id"):
            function["id"] = call["id"]
        parts.append(_signed({"functionCall": function}, signatures.get(call.get("id"))))
    return {"role": "model", "parts": parts} if parts else None


def _gemini_ai(content: Json, ids: Counter[str]) -> AIMessage:
    blocks: list[str | dict[Any, Any]] = []
    calls: list[Any] = []
    signatures: dict[str, Any] = {}
    for node in content.get("parts") or ():
        signature = node.get("thoughtSignature", node.get("thought_signature"))
        call = node.get("functionCall", node.get("function_call"))
        if call is not None:
            ids[call["name"]] += 1
            call_id = call.get("id") or f"gemini-{call['name']}-{ids[call['name']]}"
            calls.append(
                {
                    "id": call_id,
                    "name": call["name"],
                    "args": call.get("args") or {},
                    "type": "tool_call",
                }
            )
            if signature:
                signatures[call_id] = signature
        elif node.get("thought"):
            block: Json = {"type": "thinking", "thinking": node.get("text", "")}
            blocks.append({**block, "signature": signature} if signature else block)
        elif "text" in node:
            text: Json = {"type": "text", "text": node["text"]}
            blocks.append({**text, "extras": {"signature": signature}} if signature else text)
    extra = {GEMINI_SIGNATURES: signatures} if signatures else {}
    meta = {"model_provider": "google_genai"}
    return AIMessage(
        content=blocks, tool_calls=calls, additional_kwargs=extra, response_metadata=meta
    )


def _gemini_user(content: Json, open_calls: list[tuple[str, str]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    run: list[Json] = []
    for node in [*(content.get("parts") or ()), {"functionResponse": None}]:  # sentinel
        answer = node.get("functionResponse", node.get("function_response", False))
        if answer is False:
            run.append(node)
            continue
        if run:
            out.append(HumanMessage(_text(run)))
            run = []
        if answer:
            call_id = answered_call(answer, open_calls)
            response = answer.get("response")
            if isinstance(response, dict) and len(response) == 1:
                response = next(iter(response.values()))
            out.append(ToolMessage(_text(response), tool_call_id=str(call_id)))
    return out


def from_gemini(context: Context) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    system = "".join(
        p.get("text", "") for p in (context.system_instruction or {}).get("parts") or ()
    )
    if system:
        out.append(SystemMessage(system))
    ids: Counter[str] = Counter()
    open_calls: list[tuple[str, str]] = []
    for content in context.contents or ():
        if content.get("role") == "model":
            message = _gemini_ai(content, ids)
            open_calls += [(str(c["id"]), c["name"]) for c in message.tool_calls if c.get("id")]
            out.append(message)
        else:
            out.extend(_gemini_user(content, open_calls))
    return out


def native_turn(message: AIMessage, fmt: str) -> list[Json]:
    """An `AIMessage`'s turns in `fmt` ([] when nothing of it is native)."""
    if fmt == "anthropic":
        turn = anthropic_turn(message)
        return [turn] if turn else []
    if fmt == "responses":
        return responses_items(message)
    content = gemini_content(message)
    return [content] if content else []


def from_context(context: Context, fmt: str) -> list[BaseMessage]:
    if fmt == "anthropic":
        return from_anthropic(context)
    if fmt == "responses":
        return from_responses(context)
    return from_gemini(context)
