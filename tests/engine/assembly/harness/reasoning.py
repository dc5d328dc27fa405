"""What the reasoning invariants know without the assembly (docs/context.md#reasoning-state):
each vendor's nodes and which are reasoning, whose row each node of an answer is, and
how a row's nodes as sent compare with its payload as stored.

- nodes: an Anthropic turn's content blocks, a Responses row's items, a Gemini
  content's parts. Reasoning (a unit, as `reasoning_dropped` counts them): `thinking`
  and `redacted_thinking` blocks; `reasoning` items; thought parts and parts carrying a
  `thoughtSignature` (either spelling).
- `owned(answer)`: the nodes of the answer's assistant side (Anthropic assistant
  messages, Responses output items, Gemini model contents), grouped by the stored row
  they come from: a node names its row by a token (`native_turns.OPAQUE`,
  `REASONING`), the marker its text starts with, or an id holding the row's seq (call
  ids `call_<seq>_<j>`, `rs_<seq>x<k>`, …); a node naming none (a call posted without
  an id, a text after the first) goes with its neighbours in the same turn.
- `walk(fmt, stored, sent)`: a row's nodes as sent against its payload, in order: every
  node sent is a stored one, byte for byte (JSON key order included; an Anthropic
  `cache_control` mark aside), none merged, split, edited or added; a text node may
  show a shorter text (the row was cut to fit: docs/context.md#the-newest-turn, the slice with only
  its content replaced); reasoning may be left out (counted), never another node; a Gemini
  part may lose its signature (its reasoning left out) or, the first call of a step
  with none, gain the dummy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextq.history import Message
from tests.engine.assembly.harness.text import MARKER
from tests.engine.assembly.harness.vendor_turns import LETTER, OPAQUE, REASONING

# Google's documented dummy (`skip_thought_signature_validator`, base64):
# docs/context.md#reasoning-state
DUMMY_SIGNATURE = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="
SIGNATURE_KEYS = ("thoughtSignature", "thought_signature")
CALL_KEYS = ("functionCall", "function_call")
RESPONSE_KEYS = ("functionResponse", "function_response")
_ROW_ID = re.compile(r"^(?:call|rs|msg|fc|ws|xf|srvtoolu)_(\d+)[x_]\d+$")
MARK = "cache_control"


def dumps(node: Any) -> str:
    """A node's JSON as the API receives it (key order kept: byte for byte)."""
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"))


def without(node: Any, keys: Iterable[str]) -> Any:
    if not isinstance(node, dict):
        return node
    drop = set(keys)
    return {k: v for k, v in node.items() if k not in drop}


# ---------------------------------------------------------------- nodes


def nodes_of(fmt: str, payload: Any) -> list[Any]:
    """A stored slice's nodes."""
    if fmt == "responses":
        return list(payload) if isinstance(payload, list) else []
    key = "parts" if fmt == "gemini" else "content"
    nodes = payload.get(key) if isinstance(payload, dict) else None
    if isinstance(nodes, str):
        return [{"type": "text", "text": nodes}]
    return list(nodes) if isinstance(nodes, list) else []


def signature_of(part: Any) -> Any:
    if not isinstance(part, dict):
        return None
    return next((part[k] for k in SIGNATURE_KEYS if part.get(k) is not None), None)


def is_call(part: Any) -> bool:
    return isinstance(part, dict) and any(part.get(k) is not None for k in CALL_KEYS)


def is_pure_reasoning(fmt: str, node: Any) -> bool:
    """A node that is reasoning and nothing else (a thought, a thinking block, an item)."""
    if not isinstance(node, dict):
        return False
    if fmt == "anthropic":
        return node.get("type") in ("thinking", "redacted_thinking")
    if fmt == "responses":
        return node.get("type") == "reasoning"
    return node.get("thought") is True


def is_reasoning(fmt: str, node: Any) -> bool:
    """A reasoning unit: a pure one, or (Gemini) a part carrying a signature."""
    return is_pure_reasoning(fmt, node) or (fmt == "gemini" and signature_of(node) is not None)


def is_text(fmt: str, node: Any) -> bool:
    """A node holding visible text (what a row shown shorter replaces)."""
    if not isinstance(node, dict) or is_pure_reasoning(fmt, node):
        return False
    if fmt == "anthropic":
        return node.get("type") == "text"
    if fmt == "responses":
        return node.get("type", "message") == "message"
    return isinstance(node.get("text"), str)


def non_text_nodes(fmt: str, payload: Any) -> list[Any]:
    return [n for n in nodes_of(fmt, payload) if not is_text(fmt, n)]


def units(fmt: str, payload: Any) -> int:
    """Reasoning units of a stored slice (as `reasoning_dropped` counts them)."""
    return sum(1 for n in nodes_of(fmt, payload) if is_reasoning(fmt, n))


# ---------------------------------------------------------------- whose row


def _first_text(fmt: str, node: dict[str, Any]) -> str:
    if fmt == "responses":
        content = node.get("content")
        if isinstance(content, str):
            return content
        texts = [p.get("text") for p in content or () if isinstance(p, dict)]
        return next((t for t in texts if isinstance(t, str)), "")
    return str(node.get("text") or "")


def _ids(fmt: str, node: dict[str, Any]) -> list[Any]:
    if fmt == "gemini":
        call = next((node[k] for k in CALL_KEYS if isinstance(node.get(k), dict)), {})
        return [call.get("id")]
    return [node.get("id"), node.get("call_id"), node.get("tool_use_id")]


def owner_of(fmt: str, node: Any) -> int | None:
    """The seq of the row a node names (None when it names none)."""
    if not isinstance(node, dict):
        return None
    text = dumps(node)
    letter = LETTER.get(fmt)
    for token in (*REASONING.finditer(text), *OPAQUE.finditer(text)):
        if token.group(1) == letter:
            return int(token.group(2))
    if is_text(fmt, node):
        found = MARKER.match(_first_text(fmt, node))
        if found:
            return int(found.group(1))
    for value in _ids(fmt, node):
        found = _ROW_ID.match(value) if isinstance(value, str) else None
        if found:
            return int(found.group(1))
    return None


def assistant_groups(answer: dict[str, Any]) -> list[list[Any]]:
    """The answer's assistant side, turn by turn: what reasoning may be in."""
    fmt = answer["format"]
    if fmt == "anthropic":
        return [
            list(m["content"])
            for m in answer["messages"]
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        ]
    if fmt == "gemini":
        return [list(c["parts"]) for c in answer["contents"] if c.get("role") == "model"]
    if fmt != "responses":
        return []
    groups: list[list[Any]] = [[]]
    for item in answer["input"]:
        kind = item.get("type", "message")
        is_input = kind == "message" and item.get("role") != "assistant"
        if is_input or kind in ("function_call_output", "custom_tool_call_output"):
            groups.append([])
        else:
            groups[-1].append(item)
    return [g for g in groups if g]


def owned(answer: dict[str, Any], stored: Sequence[Message]) -> dict[int, list[Any]]:
    """The answer's assistant-side nodes by the seq of the row each comes from (see the
    module); nodes whose row cannot be told are under -1."""
    out: dict[int, list[Any]] = {}
    for group in owned_groups(answer, stored):
        for seq, node in group:
            out.setdefault(seq, []).append(node)
    return out


def owned_groups(answer: dict[str, Any], stored: Sequence[Message]) -> list[list[tuple[int, Any]]]:
    """`assistant_groups` with each node's row (-1: none told). A node naming no row
    is first looked up among the stored nodes (as stored, without its signature or
    mark), then goes with its neighbours: two model turns merged into one content (a
    user message between them left out) keep their own rows."""
    fmt = answer["format"]
    by_dump = _stored_nodes(fmt, stored)
    by_call = _calls_by_id(stored)
    out = []
    for group in assistant_groups(answer):
        owners = [owner_of(fmt, n) for n in group]
        shared: dict[int, list[int]] = {}  # a node two rows hold: told by its neighbours
        for i, node in enumerate(group):
            rows = by_dump.get(dumps(without(node, (MARK, *SIGNATURE_KEYS))), [])
            if owners[i] is None and len(rows) == 1:
                owners[i] = rows[0]
            elif owners[i] is None and rows:
                shared[i] = rows
                continue
            if owners[i] is None and isinstance(node, dict):
                # a call converted from another vendor's turn (a Gemini call's id is
                # made from its name): the row whose stored calls hold its id
                owners[i] = next((by_call[c] for c in _ids(fmt, node) if c in by_call), None)
        for i in range(len(group)):
            if owners[i] is None:
                near = _neighbour(owners, i)
                rows = shared.get(i)
                owners[i] = near if rows is None or near in rows else rows[0]
        out.append([(-1 if o is None else o, n) for o, n in zip(owners, group, strict=True)])
    return out


def anthropic_loop_rows(
    answer: dict[str, Any], groups: list[list[tuple[int, Any]]]
) -> tuple[set[int], set[int]]:
    """How Anthropic reads the tool loop of an answer that ends on a user turn holding
    tool results (a user message sent with results does not end the loop: "A tool-use
    loop is one assistant turn. It ends only when a user message that is not a tool
    result arrives", research §1.2): the rows of the latest assistant turn, whose
    thinking the API checks ("`thinking` or `redacted_thinking` blocks in the latest
    assistant message cannot be modified", §1.5), and the rows of every assistant turn
    since the last user turn holding no result ("Required: within a tool-use turn, pass
    thinking blocks back", §1.2). Both empty when the answer ends otherwise (a final
    answer, a reminder of its own: the loop has ended)."""
    turns = [m for m in answer["messages"] if m["role"] != "system"]

    def results(m: dict[str, Any]) -> bool:
        blocks = m["content"] if isinstance(m["content"], list) else []
        return m["role"] == "user" and any(b.get("type") == "tool_result" for b in blocks)

    if not turns or not groups or not results(turns[-1]):
        return set(), set()
    last = max(
        (i for i, m in enumerate(turns) if m["role"] == "user" and not results(m)), default=-1
    )
    after = sum(1 for m in turns[last + 1 :] if m["role"] == "assistant")
    latest = {seq for seq, _ in groups[-1] if seq >= 0}
    since = {seq for group in groups[len(groups) - after :] for seq, _ in group if seq >= 0}
    return latest, since | latest


def _calls_by_id(stored: Sequence[Message]) -> dict[str, int]:
    """Each stored assistant row's tool call ids: its seq."""
    return {
        str(call["id"]): m.seq
        for m in stored
        if m.role == "assistant"
        for call in m.tool_calls or ()
        if isinstance(call, dict) and call.get("id")
    }


def _neighbour(owners: list[int | None], i: int) -> int | None:
    before = next((o for o in reversed(owners[:i]) if o is not None), None)
    return before if before is not None else next((o for o in owners[i:] if o is not None), None)


def _stored_nodes(fmt: str, stored: Sequence[Message]) -> dict[str, list[int]]:
    """Each node of the answer's vendor's assistant rows, by its JSON without its
    signature and mark: the seqs of the rows holding it (more than one when two rows
    hold the same node: two Gemini calls without ids, same name and arguments)."""
    out: dict[str, list[int]] = {}
    for m in stored:
        if m.role == "assistant" and m.native is not None and m.native.format == fmt:
            for node in nodes_of(fmt, m.native.payload):
                seqs = out.setdefault(dumps(without(node, (MARK, *SIGNATURE_KEYS))), [])
                if m.seq not in seqs:
                    seqs.append(m.seq)
    return out


# ---------------------------------------------------------------- stored against sent


@dataclass(slots=True)
class Walked:
    """A row's nodes as sent against its payload."""

    sent: int = 0  # reasoning units sent
    left: int = 0  # reasoning units left out
    shortened: bool = False  # a text node shows another text (the row cut to fit)
    dummy: bool = False  # a call part gained the dummy signature
    problems: list[str] = field(default_factory=list)
    follows: list[tuple[Any, Any]] = field(default_factory=list)  # (reasoning sent, next sent)


def _same(a: Any, b: Any) -> bool:
    return dumps(without(a, (MARK,))) == dumps(without(b, (MARK,)))


def _kind(fmt: str, node: Any) -> str:
    if not isinstance(node, dict):
        return repr(node)[:20]
    if fmt == "gemini":
        return "+".join(k for k in node if k not in SIGNATURE_KEYS) or "part"
    return str(node.get("type", "message"))


def walk(fmt: str, stored: list[Any], sent: list[Any]) -> Walked:
    """Compare (module docstring); `sent` holds the row's nodes in answer order."""
    out = Walked()
    i = 0
    first_call = True
    for j, node in enumerate(stored):
        got = sent[i] if i < len(sent) else None
        reasoning = is_reasoning(fmt, node)
        if got is not None and _same(node, got):
            out.sent += reasoning
            i += 1
        elif got is not None and fmt == "gemini" and _unsigned(node, got):
            out.left += 1  # its signature left out (or, past the turn, the dummy instead)
            out.dummy = out.dummy or signature_of(got) == DUMMY_SIGNATURE
            i += 1
        elif got is not None and fmt == "gemini" and first_call and _dummied(node, got):
            out.dummy = True
            i += 1
        elif got is not None and is_text(fmt, node) and is_text(fmt, got):
            out.shortened = True  # a Gemini text part keeps its signature when cut
            kept = signature_of(got) is not None and signature_of(got) == signature_of(node)
            out.sent += reasoning and kept
            out.left += reasoning and not kept
            i += 1
        elif is_text(fmt, node):
            out.shortened = True  # the other text nodes of a row shown shorter go
            out.left += reasoning
        elif reasoning:
            out.left += 1
        else:
            out.problems.append(f"stored {_kind(fmt, node)} #{j} is not sent as stored")
            i += got is not None and _kind(fmt, got) == _kind(fmt, node)  # sent edited
        first_call = first_call and not is_call(node)
    if i < len(sent):
        extra = ", ".join(_kind(fmt, n) for n in sent[i:])
        out.problems.append(f"sent {extra} that the stored turn does not hold there")
    return out


def _unsigned(node: Any, got: Any) -> bool:
    """A stored signed part sent without its signature (its reasoning left out), or
    with the dummy in its place."""
    if signature_of(node) is None or is_pure_reasoning("gemini", node):
        return False
    if signature_of(got) not in (None, DUMMY_SIGNATURE):
        return False
    return _same(without(node, SIGNATURE_KEYS), without(got, SIGNATURE_KEYS))


def _dummied(node: Any, got: Any) -> bool:
    """The first call part of a step, stored without a signature, sent with the dummy."""
    if not is_call(node) or signature_of(node) is not None:
        return False
    return signature_of(got) == DUMMY_SIGNATURE and _same(node, without(got, SIGNATURE_KEYS))


def responses_followers(items: list[Any]) -> dict[str, Any]:
    """Each stored reasoning item (by its JSON) → the item that followed it."""
    return {
        dumps(item): items[k + 1]
        for k, item in enumerate(items[:-1])
        if is_pure_reasoning("responses", item)
    }
