"""The truncated view of a JSON-like value, with visible markers for what was cut.

Containers deeper than MAX_NESTING_DEPTH become `"<truncated: depth>"`, arrays keep
MAX_ARRAY_ITEMS items then `"... 450 more items"`, objects keep MAX_OBJECT_KEYS keys
then `"...": "... 12 more keys"`, strings keep MAX_STRING_LENGTH characters then
`… (1234 more chars)`. `shrink` works on a parsed value; `stream_json` builds the same
view from ijson's events in bounded memory, for JSON too large to parse whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from contextq.files.result import TruncationInfo
from contextq.settings import Settings

DEPTH_MARKER = "<truncated: depth>"


@dataclass
class Limits:
    depth: int
    items: int
    keys: int
    string: int
    # what was seen, for TruncationInfo
    items_shown: int = 0
    items_total: int = 0
    keys_shown: int = 0
    keys_total: int = 0
    max_depth: int = 0
    strings_cut: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, s: Settings) -> Limits:
        return cls(s.MAX_NESTING_DEPTH, s.MAX_ARRAY_ITEMS, s.MAX_OBJECT_KEYS, s.MAX_STRING_LENGTH)

    def string_value(self, value: str) -> str:
        if len(value) > self.string:
            self.strings_cut += 1
            return f"{value[: self.string]}… ({len(value) - self.string} more chars)"
        return value

    def record(self, trunc: TruncationInfo) -> None:
        trunc.record("items", self.items_shown, self.items_total)
        trunc.record("keys", self.keys_shown, self.keys_total)
        trunc.record("depth", self.depth, self.max_depth)
        trunc.count("strings truncated", self.strings_cut)


def more_items(n: int) -> str:
    return f"... {n} more items"


def more_keys(n: int) -> str:
    return f"... {n} more keys"


# ---------------------------------------------------------------- in-memory values


def shrink(value: Any, lim: Limits, depth: int = 1) -> Any:
    """The truncated view of a parsed value (recursion bounded by the depth limit)."""
    if isinstance(value, dict | list | tuple):
        if depth > lim.depth:
            lim.max_depth = max(lim.max_depth, depth - 1 + _depth_of(value))
            return DEPTH_MARKER
        lim.max_depth = max(lim.max_depth, depth)
        if isinstance(value, dict):
            return _shrink_dict(value, lim, depth)
        return _shrink_list(value, lim, depth)
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if value is None or isinstance(value, bool | int | float):
        return value
    return lim.string_value(str(value))  # str, and dates and times from YAML/TOML


def _shrink_dict(value: dict[Any, Any], lim: Limits, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lim.keys_total += len(value)
    for i, (k, v) in enumerate(value.items()):
        if i >= lim.keys:
            out["..."] = more_keys(len(value) - lim.keys)
            break
        out[lim.string_value(str(k))] = shrink(v, lim, depth + 1)
        lim.keys_shown += 1
    return out


def _shrink_list(value: list[Any] | tuple[Any, ...], lim: Limits, depth: int) -> list[Any]:
    lim.items_total += len(value)
    kept = [shrink(v, lim, depth + 1) for v in value[: lim.items]]
    lim.items_shown += len(kept)
    if len(value) > lim.items:
        kept.append(more_items(len(value) - lim.items))
    return kept


def _depth_of(value: Any) -> int:
    """Nesting depth of containers in `value` (iterative: no recursion on deep data)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list | tuple):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node)
    return deepest


# ---------------------------------------------------------------- streamed JSON


class _Discard:
    """Stands for a container whose events are consumed but not kept."""


@dataclass
class _Frame:
    container: Any  # list, dict or _Discard
    kind: str  # "list" | "dict"
    count: int = 0
    key: str = ""


class _JsonViewBuilder:
    """Builds the truncated view from ijson `basic_parse` events, in bounded memory."""

    def __init__(self, lim: Limits) -> None:
        self.lim = lim
        self.root: list[Any] = []
        self.stack: list[_Frame] = []
        self.discard_depth = 0  # depth of the container replaced by the depth marker

    def build(self, events: Iterator[tuple[str, Any]]) -> Any:
        for event, value in events:
            if event in ("start_map", "start_array"):
                self.start("list" if event == "start_array" else "dict")
            elif event in ("end_map", "end_array"):
                self.end()
            elif event == "map_key":
                if self.stack and not self._full(self.stack[-1]):
                    self.stack[-1].key = self.lim.string_value(value)
            else:
                self.scalar(event, value)
        return self.root[0] if self.root else None

    def _full(self, frame: _Frame) -> bool:
        cap = self.lim.items if frame.kind == "list" else self.lim.keys
        return isinstance(frame.container, _Discard) or frame.count >= cap

    def place(self, value: Any) -> None:
        if not self.stack:
            self.root.append(value)
            return
        frame = self.stack[-1]
        frame.count += 1
        if isinstance(frame.container, _Discard):
            return
        if frame.kind == "list" and frame.count <= self.lim.items:
            frame.container.append(value)
            self.lim.items_shown += 1
        elif frame.kind == "dict" and frame.count <= self.lim.keys:
            frame.container[frame.key] = value
            self.lim.keys_shown += 1

    def start(self, kind: str) -> None:
        depth = len(self.stack) + 1
        self.lim.max_depth = max(self.lim.max_depth, depth)
        hidden = self.discard_depth or (self.stack and self._full(self.stack[-1]))
        if not hidden and depth > self.lim.depth:
            self.place(DEPTH_MARKER)
            self.discard_depth = depth
            self.stack.append(_Frame(_Discard(), kind))
        elif hidden:
            if self.stack:
                self.stack[-1].count += 1  # counted in its parent, not kept
            self.stack.append(_Frame(_Discard(), kind))
        else:
            container: Any = [] if kind == "list" else {}
            self.place(container)
            self.stack.append(_Frame(container, kind))

    def end(self) -> None:
        frame = self.stack.pop()
        lim = self.lim
        if isinstance(frame.container, _Discard):
            if self.discard_depth == len(self.stack) + 1:
                self.discard_depth = 0
        elif frame.kind == "list":
            lim.items_total += frame.count
            if frame.count > lim.items:
                frame.container.append(more_items(frame.count - lim.items))
        else:
            lim.keys_total += frame.count
            if frame.count > lim.keys:
                frame.container["..."] = more_keys(frame.count - lim.keys)

    def scalar(self, event: str, value: Any) -> None:
        if self.stack and self._full(self.stack[-1]):
            self.stack[-1].count += 1  # counted, not kept
            return
        if event == "string":
            value = self.lim.string_value(value)
        elif event == "number" and not isinstance(value, int | float):
            value = float(value)
        self.place(value)


def stream_json(events: Iterator[tuple[str, Any]], lim: Limits) -> Any:
    """The truncated view of a JSON document given as ijson `basic_parse` events."""
    return _JsonViewBuilder(lim).build(events)
