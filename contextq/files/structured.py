"""JSON, JSONL, YAML, TOML, XML → a truncated view with visible markers.

Cuts: containers deeper than MAX_NESTING_DEPTH become `"<truncated: depth>"`,
arrays keep MAX_ARRAY_ITEMS items then `"... 450 more items"`, objects keep
MAX_OBJECT_KEYS keys then `"...": "... 12 more keys"`, strings keep
MAX_STRING_LENGTH characters then `… (1234 more chars)`.

Safety: JSON up to MAX_JSON_PARSE_BYTES is parsed with the stdlib (a
RecursionError on absurd nesting becomes a clear failure); above that it is
streamed through ijson's events and only the truncated view is built. YAML
is read with the safe loader only (no `!!python/*`), and its node graph is
measured before construction so an alias bomb is refused. XML is streamed
through defusedxml (entities, external references → HostileInput), keeping
only the truncated tree.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextq.errors import HostileInput, InputTooLarge, InvalidInput
from contextq.files.feeds import is_feed, read_feed, render_feed
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.files.text import file_tokens, iter_decoded, read_sample, sniff_encoding
from contextq.settings import Settings

DEPTH_MARKER = "<truncated: depth>"
MAX_YAML_NODES = 1_000_000  # expanded size (aliases counted each time they are used)
MAX_JSONL_LINE_BYTES = 8 << 20


@dataclass
class _Limits:
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
    def of(cls, s: Settings) -> _Limits:
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


def shrink(value: Any, lim: _Limits, depth: int = 1) -> Any:
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


def _shrink_dict(value: dict[Any, Any], lim: _Limits, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lim.keys_total += len(value)
    for i, (k, v) in enumerate(value.items()):
        if i >= lim.keys:
            out["..."] = more_keys(len(value) - lim.keys)
            break
        out[lim.string_value(str(k))] = shrink(v, lim, depth + 1)
        lim.keys_shown += 1
    return out


def _shrink_list(value: list[Any] | tuple[Any, ...], lim: _Limits, depth: int) -> list[Any]:
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

    def __init__(self, lim: _Limits) -> None:
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


def stream_json(events: Iterator[tuple[str, Any]], lim: _Limits) -> Any:
    """The truncated view of a JSON document given as ijson `basic_parse` events."""
    return _JsonViewBuilder(lim).build(events)


# ---------------------------------------------------------------- readers


def _read_text(path: Path, limit: int, what: str) -> str:
    size = path.stat().st_size
    if size > limit:
        raise InputTooLarge(
            f"this {what} file is {size} bytes, over the {limit}-byte limit for reading it "
            "whole (MAX_JSON_PARSE_BYTES); convert it to JSON or JSONL, which are streamed"
        )
    encoding = sniff_encoding(read_sample(path))
    return "".join(iter_decoded(path, encoding)).lstrip("\ufeff")


def read_json(path: Path, settings: Settings, lim: _Limits, meta: dict[str, Any]) -> Any:
    size = path.stat().st_size
    if size > settings.MAX_JSON_PARSE_BYTES:
        return _read_json_streamed(path, lim, meta)
    text = _read_text(path, settings.MAX_JSON_PARSE_BYTES, "JSON")
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise InvalidInput(
            "this JSON is nested too deeply to read (thousands of levels); it looks "
            "generated to break parsers"
        ) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    meta["parser"] = "json"
    return shrink(value, lim)


def _read_json_streamed(path: Path, lim: _Limits, meta: dict[str, Any]) -> Any:
    import ijson

    meta["parser"] = "ijson (streamed)"
    with path.open("rb") as fh:
        try:
            return stream_json(ijson.basic_parse(fh, use_float=True), lim)
        except ijson.JSONError as exc:
            raise InvalidInput(f"invalid JSON: {exc}") from exc


def read_jsonl(path: Path, lim: _Limits, meta: dict[str, Any]) -> Any:
    """The first MAX_ARRAY_ITEMS records, each truncated, and the exact count of the rest."""
    items: list[Any] = []
    total = 0
    invalid: list[int] = []
    for lineno, raw in _jsonl_lines(path, keep=lim.items):
        total += 1
        if raw is None:
            continue  # counted, not kept
        if isinstance(raw, int):
            items.append(f"<line {lineno}: {raw} bytes, too long to show>")
            continue
        try:
            value = json.loads(raw)
        except RecursionError:
            items.append(f"<line {lineno}: nested too deeply>")
            invalid.append(lineno)
            continue
        except json.JSONDecodeError as exc:
            items.append(f"<line {lineno}: invalid JSON at column {exc.colno}: {exc.msg}>")
            invalid.append(lineno)
            continue
        items.append(shrink(value, lim, depth=2))
    lim.items_total += total
    lim.items_shown += len(items)
    if total > len(items):
        items.append(more_items(total - len(items)))
    meta["records"] = total
    if invalid:
        meta["invalid_lines_shown"] = invalid
    return items


_BLANK_AFTER = re.compile(rb"\n(?=[ \t\r]*\n)")
_WS = b" \t\r"


def _count_ended(data: bytes, blank_so_far: bool) -> tuple[int, bool]:
    """Non-blank lines that end in `data`, and whether its unfinished last line is blank."""
    n = data.count(b"\n")
    if not n:
        return 0, blank_so_far and not data.strip(_WS)
    ended = n - len(_BLANK_AFTER.findall(data))
    if blank_so_far and not data[: data.find(b"\n")].strip(_WS):
        ended -= 1
    return ended, not data[data.rfind(b"\n") + 1 :].strip(_WS)


def _jsonl_lines(path: Path, keep: int) -> Iterator[tuple[int, bytes | int | None]]:
    """Per non-blank line: (line number, its bytes | its length if over
    MAX_JSONL_LINE_BYTES | None once `keep` lines were given). Lines are never
    held past the cap; after `keep` lines the rest is counted chunk by chunk."""
    lineno = kept = 0
    line = bytearray()
    line_len = 0
    blank = True  # the current (unfinished) line holds only whitespace so far
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            start = 0
            while kept < keep:
                nl = chunk.find(b"\n", start)
                part = chunk[start:] if nl < 0 else chunk[start:nl]
                if line_len + len(part) <= MAX_JSONL_LINE_BYTES:
                    line += part
                line_len += len(part)
                blank = blank and not part.strip(_WS)
                start = len(chunk) if nl < 0 else nl + 1
                if nl < 0:
                    break
                if not blank:
                    lineno += 1
                    kept += 1
                    yield lineno, bytes(line) if line_len == len(line) else line_len
                line, line_len, blank = bytearray(), 0, True
            if kept >= keep:  # counting only, from here on
                ended, blank = _count_ended(chunk[start:], blank)
                for _ in range(ended):
                    lineno += 1
                    yield lineno, None
    if not blank:
        lineno += 1
        yield lineno, (bytes(line) if line_len == len(line) else line_len) if kept < keep else None


def read_yaml(path: Path, settings: Settings, lim: _Limits, meta: dict[str, Any]) -> Any:
    import yaml

    text = _read_text(path, settings.MAX_JSON_PARSE_BYTES, "YAML")
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        _check_yaml_size(nodes)
        docs = [loader.construct_document(node) for node in nodes]
    except RecursionError as exc:
        raise InvalidInput("this YAML is nested too deeply to read") from exc
    except yaml.constructor.ConstructorError as exc:
        if "python/" in str(exc) or "tag:yaml.org,2002:python" in str(exc):
            raise HostileInput(
                "this YAML uses a `!!python/...` tag, which could run code; only plain YAML is read"
            ) from exc
        raise InvalidInput(f"this YAML cannot be read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise InvalidInput(f"invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    meta["documents"] = len(docs)
    value: Any = docs[0] if len(docs) == 1 else docs
    return shrink(value, lim)


def _check_yaml_size(nodes: list[Any]) -> None:
    """Refuse an alias bomb: the node graph's size with every alias expanded."""
    import yaml

    sizes: dict[int, int] = {}
    total = 0
    for root in nodes:
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if key in sizes and not done:
                continue
            children: list[Any] = []
            if isinstance(node, yaml.SequenceNode):
                children = list(node.value)
            elif isinstance(node, yaml.MappingNode):
                children = [n for pair in node.value for n in pair]
            if done:
                size = 1 + sum(sizes[id(c)] for c in children)
                if size > MAX_YAML_NODES:
                    raise HostileInput(
                        f"this YAML expands to over {MAX_YAML_NODES} nodes through aliases "
                        "(an alias bomb); it is refused"
                    )
                sizes[key] = size
                continue
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
        total += sizes[id(root)]
        if total > MAX_YAML_NODES:
            raise HostileInput(f"this YAML expands to over {MAX_YAML_NODES} nodes; it is refused")


def read_toml(path: Path, settings: Settings, lim: _Limits, meta: dict[str, Any]) -> Any:
    import tomllib

    text = _read_text(path, settings.MAX_JSON_PARSE_BYTES, "TOML")
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"invalid TOML: {exc}") from exc
    except RecursionError as exc:
        raise InvalidInput("this TOML is nested too deeply to read") from exc
    return shrink(value, lim)


# ---------------------------------------------------------------- XML


def read_xml(path: Path, settings: Settings, lim: _Limits, meta: dict[str, Any]) -> str:
    """Stream the XML, pruning as it goes; render the kept tree back as indented XML.

    An element is dropped from its parent as soon as it ends if it lies deeper
    than MAX_NESTING_DEPTH or past the parent's MAX_ARRAY_ITEMS children, so
    memory holds only the view, whatever the file's size.
    """
    import xml.etree.ElementTree as ET

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    open_elems: list[Any] = []
    counts: list[int] = []  # children seen so far, per open element
    hidden: list[bool] = []  # past its parent's item limit, below the depth limit, or inside one
    root: Any = None
    try:
        with path.open("rb") as fh:
            for event, elem in iterparse(fh, events=("start", "end")):
                if event == "start":
                    if counts:
                        counts[-1] += 1
                    hidden.append(
                        bool(hidden)
                        and (hidden[-1] or counts[-1] > lim.items or len(open_elems) >= lim.depth)
                    )
                    open_elems.append(elem)
                    counts.append(0)
                    lim.max_depth = max(lim.max_depth, len(open_elems))
                    if root is None:
                        root = elem
                    continue
                depth = len(open_elems)
                open_elems.pop()
                children = counts.pop()
                if hidden.pop():
                    elem.clear()
                    if open_elems:
                        open_elems[-1].remove(elem)
                    continue
                _trim_element(elem, lim, depth, children)
    except DefusedXmlException as exc:
        raise HostileInput(
            f"this XML declares entities or external references ({type(exc).__name__}); "
            "they are refused (billion-laughs and XXE protection)"
        ) from exc
    except SyntaxError as exc:  # xml.etree.ElementTree.ParseError
        raise InvalidInput(f"invalid XML: {exc}") from exc
    if root is None:
        raise InvalidInput("this XML has no root element")
    meta["root"] = root.tag
    ET.indent(root)
    return ET.tostring(root, encoding="unicode")


def _trim_element(elem: Any, lim: _Limits, depth: int, children: int) -> None:
    """Cut an element that has just ended: text, attributes, depth, children."""
    import xml.etree.ElementTree as ET

    if depth < lim.depth:  # children of the last level are cut by depth, not counted as items
        lim.items_total += children
        lim.items_shown += min(children, lim.items)
    lim.keys_total += len(elem.attrib)
    lim.keys_shown += min(len(elem.attrib), lim.keys)
    if elem.text:
        elem.text = lim.string_value(elem.text.strip()) or None
    if elem.tail:
        elem.tail = lim.string_value(elem.tail.strip()) or None
    if len(elem.attrib) > lim.keys:
        extra = len(elem.attrib) - lim.keys
        for name in list(elem.attrib)[lim.keys :]:
            del elem.attrib[name]
        elem.set("_more", more_keys(extra))
    for name, value in list(elem.attrib.items()):
        elem.set(name, lim.string_value(value))
    if depth == lim.depth and children:
        elem.text = DEPTH_MARKER
    elif children > lim.items:
        elem.append(ET.Comment(f" {more_items(children - lim.items)} "))


# ---------------------------------------------------------------- processor


class StructuredProcessor:
    name = "structured"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "structured"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        settings = ctx.settings
        lim = _Limits.of(settings)
        meta: dict[str, Any] = {}
        kind = info.file_type
        if kind == "xml" and is_feed(path):
            feed = read_feed(path, settings)
            content = render_feed(feed)
            meta["feed"] = feed.kind
            meta["items"] = feed.total_items
            lim.items_shown, lim.items_total = len(feed.items), feed.total_items
            lim.strings_cut = feed.texts_cut
        elif kind == "xml":
            body = read_xml(path, settings, lim, meta)
            content = f"```xml\n{body}\n```"
        else:
            if kind == "json":
                view = read_json(path, settings, lim, meta)
            elif kind == "jsonl":
                view = read_jsonl(path, lim, meta)
            elif kind == "yaml":
                view = read_yaml(path, settings, lim, meta)
            elif kind == "toml":
                view = read_toml(path, settings, lim, meta)
            else:
                raise InvalidInput(f"no structured reader for {kind}")
            content = _render(view, kind)
        trunc = TruncationInfo()
        lim.record(trunc)
        meta["depth"] = lim.max_depth
        result = FileExtractionResult(
            success=True,
            file_type=info.file_type,
            category="structured",
            media_type=info.media_type,
            content=content,
            truncation=trunc,
            metadata=meta,
        )
        result.full_text_tokens = _file_tokens(path)
        return result


def _file_tokens(path: Path) -> int:
    """Tokens of the file's whole text (what `token_count` reports for a cut view)."""
    return file_tokens(path)[0]


def _render(view: Any, kind: str) -> str:
    if kind in ("yaml", "toml"):
        import yaml

        dumped = yaml.safe_dump(view, sort_keys=False, allow_unicode=True, width=120)
        return f"```yaml\n{dumped.rstrip()}\n```"
    buf = io.StringIO()
    json.dump(view, buf, indent=2, ensure_ascii=False, default=str)
    return f"```json\n{buf.getvalue()}\n```"
