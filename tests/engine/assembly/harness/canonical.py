"""The canonical prefix of a reasoning node (docs/context.md#bound-reasoning; issue 27): what a
bound model's block is bound to, hashed as a user checking an answer would hash it.

An answer's wire fields, by format (`FIELDS`): Anthropic `system`, `tools`, `messages`;
Responses `instructions`, `tools`, `input`; Gemini `system_instruction`, `tools`,
`contents`. Canonicalising removes every reasoning unit (Anthropic `thinking` and
`redacted_thinking` blocks, Responses `reasoning` items, Gemini `thought` parts and every
part's `thoughtSignature`), every `cache_control` key at any depth, and a list element
whose nodes are all reasoning; the rest is kept as sent. The prefix of the node at
`list[i]`, node `j` is the other fields, the list's elements before `i`, and element `i`
holding only its (non-reasoning) nodes before `j` when it has any (Responses: items are
the nodes, no `j`). Its hash: sha256 of `json.dumps(doc, sort_keys=True,
separators=(",", ":"))` (ASCII escapes), lowercase hex. /work/notes/binding-oracle.md
and docs/harness.md say it in words.

`prefix_hash` is the definition, as a user would write it; `Canonical` computes the
prefix of every node of one answer in one pass (each element serialised once) and is
checked against it (`test_binding.py`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# format -> (other fields, list field, node key inside an element or None)
FIELDS: dict[str, tuple[tuple[str, ...], str, str | None]] = {
    "anthropic": (("system", "tools"), "messages", "content"),
    "responses": (("instructions", "tools"), "input", None),
    "gemini": (("system_instruction", "tools"), "contents", "parts"),
}
MARK = "cache_control"
GEMINI_SIGNATURES = ("thoughtSignature", "thought_signature")


def is_reasoning_node(fmt: str, node: Any) -> bool:
    """A reasoning unit of the format (what canonicalising removes)."""
    if not isinstance(node, dict):
        return False
    if fmt == "anthropic":
        return node.get("type") in ("thinking", "redacted_thinking")
    if fmt == "responses":
        return node.get("type") == "reasoning"
    return node.get("thought") is True


def strip(value: Any, fmt: str = "") -> Any:
    """`value` without any `cache_control` key (and, in Gemini, signature), at any depth."""
    if isinstance(value, dict):
        drop = (MARK, *GEMINI_SIGNATURES) if fmt == "gemini" else (MARK,)
        return {k: strip(v, fmt) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [strip(v, fmt) for v in value]
    return value


def strip_nodes(fmt: str, nodes: Sequence[Any]) -> list[Any]:
    return [strip(n, fmt) for n in nodes if not is_reasoning_node(fmt, n)]


def strip_element(fmt: str, element: Any) -> Any | None:
    """An element of the list field canonicalised; None when nothing of it is left."""
    _, _, key = FIELDS[fmt]
    if key is None:
        return None if is_reasoning_node(fmt, element) else strip(element, fmt)
    nodes = element.get(key) if isinstance(element, dict) else None
    if not isinstance(nodes, list):
        return strip(element, fmt)
    kept = strip_nodes(fmt, nodes)
    if not kept:
        return None
    return {**strip({k: v for k, v in element.items() if k != key}, fmt), key: kept}


def _partial(fmt: str, element: Any, j: int) -> list[Any]:
    _, _, key = FIELDS[fmt]
    if key is None or not isinstance(element, dict) or not isinstance(element.get(key), list):
        return []
    before = strip_nodes(fmt, element[key][:j])
    if not before:
        return []
    return [{**strip({k: v for k, v in element.items() if k != key}, fmt), key: before}]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def prefix_hash(answer: dict[str, Any], i: int, j: int = 0) -> str:
    """The hash of the canonical prefix of node `j` of element `i` of the answer's list
    (Responses: of `input[i]`): the definition (module docstring)."""
    fmt = answer["format"]
    others, list_key, _ = FIELDS[fmt]
    elements = answer.get(list_key) or []
    kept = [e for e in (strip_element(fmt, e) for e in elements[:i]) if e is not None]
    if i < len(elements):
        kept += _partial(fmt, elements[i], j)
    doc = {f: strip(answer.get(f), fmt) for f in others}
    doc[list_key] = kept
    return _digest(dumps(doc))


def hash_after(answer: dict[str, Any], written: Sequence[Any] = ()) -> str:
    """What a model signs a reasoning node with: the canonical prefix it sits after in
    the request it read (`answer`) extended by its own output so far (`written`: the
    nodes of its new step before the node — Anthropic blocks or Gemini parts of one
    assistant/model element, Responses items)."""
    fmt = answer["format"]
    _, list_key, key = FIELDS[fmt]
    elements = list(answer.get(list_key) or [])
    if key is None:
        elements += list(written)
        return prefix_hash({**answer, list_key: elements}, len(elements))
    role = "model" if fmt == "gemini" else "assistant"
    elements.append({"role": role, key: list(written)})
    return prefix_hash({**answer, list_key: elements}, len(elements) - 1, len(written))


def node_key(node: Any) -> str:
    """A reasoning node's identity in any answer: its JSON without a cache mark."""
    return dumps(strip(node))


@dataclass(frozen=True, slots=True)
class Prefixed:
    """A reasoning node of an answer and the hash of its canonical prefix."""

    index: int  # its element of the list field
    j: int  # its place among the element's nodes (Responses: 0)
    node: Any
    hash: str
    key: str  # `node_key`


class Canonical:
    """Every reasoning node's prefix hash in one answer, in one pass (each element
    serialised once, the hash carried along): the values `prefix_hash` gives.
    `prefixed`: the reasoning nodes with their prefix hashes, in answer order; `starts[i]`:
    the hash of the prefix before element `i` (what a node opening it is bound to)."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.fmt = fmt = str(answer["format"])
        others, list_key, key = FIELDS[fmt]
        if min([list_key, *others]) != list_key:
            raise ValueError("the list field must sort first")  # the composition below
        rest = dumps({f: strip(answer.get(f), fmt) for f in others})
        self._tail = ("]," + rest[1:] if others else "]}").encode("ascii")
        self._running = hashlib.sha256(('{"' + list_key + '":[').encode("ascii"))
        self._count = 0
        self.prefixed: list[Prefixed] = []
        self.starts: list[str] = []
        for i, element in enumerate(answer.get(list_key) or []):
            self.starts.append(self._hash(None))
            if key is None:
                if is_reasoning_node(fmt, element):
                    self.prefixed.append(Prefixed(i, 0, element, self.starts[i], node_key(element)))
            else:
                nodes = element.get(key) if isinstance(element, dict) else None
                for j, node in enumerate(nodes if isinstance(nodes, list) else ()):
                    if is_reasoning_node(fmt, node):
                        partial = _partial(fmt, element, j)
                        digest = self._hash(dumps(partial[0]) if partial else None)
                        self.prefixed.append(Prefixed(i, j, node, digest, node_key(node)))
            kept = strip_element(fmt, element)
            if kept is not None:
                self._append(self._running, dumps(kept))
                self._count += 1

    def _append(self, h: Any, part: str) -> None:
        if self._count:
            h.update(b",")
        h.update(part.encode("ascii"))

    def _hash(self, extra: str | None) -> str:
        h = self._running.copy()
        if extra is not None:
            self._append(h, extra)
        h.update(self._tail)
        return h.hexdigest()
