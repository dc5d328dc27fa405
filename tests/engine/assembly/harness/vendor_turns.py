"""Native turns as each vendor's API returns them, built from a generated conversation's
messages (the same texts, calls and results) plus what only that vendor sends back:

- anthropic: assistant turns with `thinking` blocks (with text, or `""` and a signature:
  display omitted), `redacted_thinking`, thinking interleaved between tool calls and
  texts, server-tool blocks (`server_tool_use`, `web_search_tool_result`), text with
  encrypted citations, a block type the SDK does not know; results as `tool_result`
  blocks of one user turn; mid-conversation `system` turns;
- responses: `reasoning` items (`id`, `summary` or none, `encrypted_content` or null,
  `content`), assistant `message` items with `phase`, `function_call`s (with their
  `fc_` ids), reasoning between parallel calls, `web_search_call`, an unknown item type;
  `function_call_output`s; `developer` messages;
- gemini: `thought` parts, `thoughtSignature`s (the first call of a step only, as
  Gemini sends parallel calls; sometimes none: a step that needs the dummy; on a final
  text), calls with or without ids (results then paired by name), the SDK's snake_case
  dump (its `parts` before its `role`), an unknown part field.

Every opaque value and reasoning text carries a token naming its vendor and row
(`OPQa12k0`, `RZNg7k1`: `OPAQUE`, `REASONING`), so that an answer can be searched for
state that is not its own; every node id holds its row's seq (`rs_12x0`, `call_12_0`).
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from contextq.history import Message

LETTER = {"anthropic": "a", "responses": "r", "gemini": "g"}
OPAQUE = re.compile(r"OPQ([arg])(\d+)k(\d+)")
REASONING = re.compile(r"RZN([arg])(\d+)k(\d+)")
UNKNOWN_BLOCK = "x_future_block"  # an Anthropic block type no SDK knows
UNKNOWN_ITEM = "x_future_item"  # a Responses item type no SDK knows
UNKNOWN_FIELD = "xFutureField"  # a Gemini part field no SDK knows
_B64 = string.ascii_letters + string.digits + "+/"


@dataclass(slots=True)
class Style:
    """How one batch's vendor turns are drawn."""

    vendor: str
    thinks: bool  # the model returns reasoning
    interleaves: bool  # reasoning between calls and texts
    ids: bool = True  # gemini: calls carry ids
    snake: bool = False  # gemini: the SDK's snake_case dump
    default_form: bool = False  # anthropic: blocks posted in the default (Chat) form


# ---------------------------------------------------------------- opaque values


def opaque(rng: random.Random, vendor: str, seq: int, k: int, size: int = 48) -> str:
    """An opaque value (a signature, encrypted content) naming its vendor and row: valid
    base64 (Gemini's signatures are bytes)."""
    token = f"OPQ{LETTER[vendor]}{seq}k{k}"
    body = token + "".join(rng.choice(_B64) for _ in range(rng.randrange(size // 2, size)))
    return body + "A" * (-len(body) % 4)  # whole 4-character groups: no padding


def reasoning_text(rng: random.Random, vendor: str, seq: int, k: int) -> str:
    from tests.engine.assembly.harness.text import sized_tokens, text_of

    return f"RZN{LETTER[vendor]}{seq}k{k} " + text_of(rng, sized_tokens(rng, 60))


class Counter:
    """The k of a row's tokens: each opaque value or node id of a row is numbered."""

    def __init__(self) -> None:
        self.k = -1

    def __call__(self) -> int:
        self.k += 1
        return self.k


# ---------------------------------------------------------------- anthropic


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    parsed = json.loads(call["function"]["arguments"] or "{}")
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _thinking(rng: random.Random, seq: int, k: Counter) -> dict[str, Any]:
    n = k()
    if rng.random() < 0.15:
        return {"type": "redacted_thinking", "data": opaque(rng, "anthropic", seq, n, 96)}
    shown = rng.random() < 0.6  # display summarized; else omitted: thinking ""
    text = reasoning_text(rng, "anthropic", seq, n) if shown else ""
    return {"type": "thinking", "thinking": text, "signature": opaque(rng, "anthropic", seq, n)}


def _server_tool(rng: random.Random, seq: int, k: Counter) -> list[dict[str, Any]]:
    n = k()
    use_id = f"srvtoolu_{seq}x{n}"
    return [
        {
            "type": "server_tool_use",
            "id": use_id,
            "name": "web_search",
            "input": {"query": f"query {seq}"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": use_id,
            "content": [
                {
                    "type": "web_search_result",
                    "url": f"https://example.org/{seq}",
                    "title": "Result",
                    "encrypted_content": opaque(rng, "anthropic", seq, n),
                    "page_age": None,
                }
            ],
        },
    ]


def _text_block(
    rng: random.Random, text: str, seq: int, k: Counter, *, cited: bool
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cited and rng.random() < 0.08:
        n = k()
        block["citations"] = [
            {
                "type": "web_search_result_location",
                "url": f"https://example.org/{seq}",
                "title": "Result",
                "encrypted_index": opaque(rng, "anthropic", seq, n),
                "cited_text": "",
            }
        ]
    return block


def anthropic_assistant(rng: random.Random, m: Message, style: Style) -> dict[str, Any]:
    k = Counter()
    blocks: list[dict[str, Any]] = []
    if style.thinks:
        blocks += [_thinking(rng, m.seq, k) for _ in range(rng.choice((1, 1, 1, 2)))]
    posted = not style.default_form  # the default form reads unknown blocks as Chat parts
    if posted and rng.random() < 0.06:
        blocks.append({"type": UNKNOWN_BLOCK, "note": opaque(rng, "anthropic", m.seq, k())})
    if rng.random() < 0.08:
        blocks += _server_tool(rng, m.seq, k)
    text = m.content if isinstance(m.content, str) and m.content else None
    if text is not None:
        blocks.append(_text_block(rng, text, m.seq, k, cited=posted))
    for j, call in enumerate(m.tool_calls or ()):
        if j and style.thinks and style.interleaves and rng.random() < 0.5:
            blocks.append(_thinking(rng, m.seq, k))
        name, arguments = call["function"]["name"], _arguments(call)
        blocks.append({"type": "tool_use", "id": call["id"], "name": name, "input": arguments})
    if not m.tool_calls and style.thinks and style.interleaves and rng.random() < 0.3:
        blocks += [_thinking(rng, m.seq, k), {"type": "text", "text": f" Step {m.seq} done."}]
    return {"role": "assistant", "content": blocks}


def anthropic_results(rng: random.Random, group: list[Message]) -> dict[str, Any]:
    results = [m for m in group if m.role == "tool"]
    blocks: list[dict[str, Any]] = []
    for m in results:
        content: Any = m.text()
        if rng.random() < 0.25:
            content = [{"type": "text", "text": m.text()}]
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": m.tool_call_id,
            "content": content,
        }
        if m.kind == "error":
            block["is_error"] = True
        blocks.append(block)
    blocks += [{"type": "text", "text": m.text()} for m in group if m.role == "user"]
    return {"role": "user", "content": blocks}


def anthropic_text(rng: random.Random, m: Message) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"role": m.role, "content": m.text()}
    return {"role": m.role, "content": [{"type": "text", "text": m.text()}]}


# ---------------------------------------------------------------- responses


def _reasoning_item(rng: random.Random, seq: int, k: Counter) -> dict[str, Any]:
    n = k()
    summary = (
        [{"type": "summary_text", "text": reasoning_text(rng, "responses", seq, n)}]
        if rng.random() < 0.6
        else []
    )
    item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{seq}x{n}", "summary": summary}
    if rng.random() < 0.15:
        item["content"] = [
            {"type": "reasoning_text", "text": reasoning_text(rng, "responses", seq, n)}
        ]
    item["encrypted_content"] = (
        opaque(rng, "responses", seq, n, 120) if rng.random() < 0.8 else None
    )
    if rng.random() < 0.5:
        item["status"] = "completed"
    return item


def responses_assistant(rng: random.Random, m: Message, style: Style) -> list[dict[str, Any]]:
    k = Counter()
    items: list[dict[str, Any]] = []
    if style.thinks:
        items.append(_reasoning_item(rng, m.seq, k))
    if rng.random() < 0.06:
        n = k()
        items.append(
            {
                "type": "web_search_call",
                "id": f"ws_{m.seq}x{n}",
                "status": "completed",
                "action": {"type": "search", "query": opaque(rng, "responses", m.seq, n, 16)},
            }
        )
    if rng.random() < 0.04:
        items.append({"type": UNKNOWN_ITEM, "id": f"xf_{m.seq}x{k()}", "state": "kept"})
    text = m.content if isinstance(m.content, str) and m.content else None
    if text is not None:
        message: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{m.seq}x{k()}",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        if rng.random() < 0.6:
            message["phase"] = "commentary" if m.tool_calls else "final_answer"
        items.append(message)
    for j, call in enumerate(m.tool_calls or ()):
        if j and style.thinks and style.interleaves and rng.random() < 0.5:
            items.append(_reasoning_item(rng, m.seq, k))
        function = call["function"]
        items.append(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": function["name"],
                "arguments": function["arguments"],
                "id": f"fc_{m.seq}x{k()}",
                "status": "completed",
            }
        )
    return items


def responses_results(rng: random.Random, results: list[Message]) -> list[dict[str, Any]]:
    items = []
    for m in results:
        output: Any = m.text()
        if rng.random() < 0.2:
            output = [{"type": "input_text", "text": m.text()}]
        items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": output})
    return items


def responses_text(rng: random.Random, m: Message) -> dict[str, Any]:
    role = m.role
    if role == "system" and rng.random() < 0.5:
        role = "developer"
    if rng.random() < 0.3:
        return {"role": role, "content": m.text()}
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": m.text()}]}


# ---------------------------------------------------------------- gemini


def _spell(style: Style, camel: str) -> str:
    snake = {
        "functionCall": "function_call",
        "functionResponse": "function_response",
        "thoughtSignature": "thought_signature",
    }
    return snake.get(camel, camel) if style.snake else camel


def gemini_model(rng: random.Random, m: Message, style: Style) -> dict[str, Any]:
    k = Counter()
    sig = _spell(style, "thoughtSignature")
    parts: list[dict[str, Any]] = []
    if style.thinks:
        n = k()
        thought: dict[str, Any] = {"text": reasoning_text(rng, "gemini", m.seq, n), "thought": True}
        if rng.random() < 0.3:
            thought[sig] = opaque(rng, "gemini", m.seq, n)
        if rng.random() < 0.05:
            thought[UNKNOWN_FIELD] = {"kept": opaque(rng, "gemini", m.seq, k(), 8)}
        parts.append(thought)
    text = m.content if isinstance(m.content, str) and m.content else None
    if text is not None:
        part: dict[str, Any] = {"text": text}
        if not m.tool_calls and style.thinks and rng.random() < 0.5:
            part[sig] = opaque(rng, "gemini", m.seq, k())
        parts.append(part)
    signs_first = style.thinks and rng.random() < 0.85
    for j, call in enumerate(m.tool_calls or ()):
        made: dict[str, Any] = {"name": call["function"]["name"], "args": _arguments(call)}
        if style.ids:
            made["id"] = call["id"]
        fc: dict[str, Any] = {_spell(style, "functionCall"): made}
        if j == 0 and signs_first:
            fc[sig] = opaque(rng, "gemini", m.seq, k())
        parts.append(fc)
    return _content(style, "model", parts)


def gemini_results(
    group: list[Message], names: dict[str, str], style: Style, with_ids: set[str]
) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for m in (m for m in group if m.role == "tool"):
        call_id = str(m.tool_call_id)
        made: dict[str, Any] = {"name": names[call_id], "response": {"output": m.text()}}
        if call_id in with_ids:
            made["id"] = call_id
        parts.append({_spell(style, "functionResponse"): made})
    parts += [{"text": m.text()} for m in group if m.role == "user"]
    return _content(style, "user", parts)


def gemini_text(m: Message, style: Style) -> dict[str, Any]:
    return _content(style, "user", [{"text": m.text()}])


def _content(style: Style, role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A Content: as REST has it, or as google-genai dumps it (`parts` first)."""
    return {"parts": parts, "role": role} if style.snake else {"role": role, "parts": parts}


# ---------------------------------------------------------------- one batch


def _groups(batch: list[Message]) -> Iterator[list[Message]]:
    """The batch's messages grouped as they are posted: a round's results together, and
    with them a user message that follows them (one Anthropic user turn, one Gemini
    user content: a user's words sent with the results)."""
    i = 0
    while i < len(batch):
        j = i + 1
        if batch[i].role == "tool":
            while j < len(batch) and batch[j].role == "tool":
                j += 1
            if j < len(batch) and batch[j].role == "user":
                j += 1
        yield batch[i:j]
        i = j


def vendor_items(
    rng: random.Random, batch: list[Message], style: Style, open_calls: dict[str, str]
) -> list[dict[str, Any]]:
    """The batch in the vendor's own shape (each item in the order it was posted).
    `open_calls`: the stored calls its results may answer (Gemini names them; a call
    stored without an id of its own is answered by name)."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = dict(open_calls)
    with_ids = {c for c in open_calls if not c.startswith("gemini-")}
    for group in _groups(batch):
        m = group[0]
        if m.role == "assistant":
            for call in m.tool_calls or ():
                names[call["id"]] = call["function"]["name"]
                if style.ids:
                    with_ids.add(call["id"])
        if style.vendor == "anthropic":
            if m.role == "assistant":
                out.append(anthropic_assistant(rng, m, style))
            elif m.role == "tool":
                out.append(anthropic_results(rng, group))
            else:
                out.append(anthropic_text(rng, m))
        elif style.vendor == "responses":
            if m.role == "assistant":
                out += responses_assistant(rng, m, style)
            elif m.role == "tool":
                out += responses_results(rng, [m for m in group if m.role == "tool"])
                out += [responses_text(rng, m) for m in group if m.role == "user"]
            else:
                out.append(responses_text(rng, m))
        elif m.role == "assistant":
            out.append(gemini_model(rng, m, style))
        elif m.role == "tool":
            out.append(gemini_results(group, names, style, with_ids))
        else:
            out.append(gemini_text(m, style))
    return out
