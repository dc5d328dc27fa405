"""Readers of JSON, JSONL, YAML and TOML into the truncated view (`json_view`).

JSON up to MAX_JSON_PARSE_BYTES is parsed with the stdlib (a RecursionError on
absurd nesting becomes a clear failure); above that it is streamed through ijson's
events and only the truncated view is built. JSONL is read line by line, lines past
the shown ones only counted. YAML is read with the safe loader only (no
`!!python/*`), and its node graph is measured before construction so an alias bomb is
refused.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson
import yaml

from contextq.errors import HostileInput, InputTooLarge, InvalidInput
from contextq.files.json_view import Limits, more_items, shrink, stream_json
from contextq.files.text import iter_decoded, read_sample, sniff_encoding
from contextq.settings import Settings

MAX_YAML_NODES = 1_000_000  # expanded size (aliases counted each time they are used)
MAX_JSONL_LINE_BYTES = 8 << 20


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


def read_json(path: Path, settings: Settings, lim: Limits, meta: dict[str, Any]) -> Any:
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


def _read_json_streamed(path: Path, lim: Limits, meta: dict[str, Any]) -> Any:
    meta["parser"] = "ijson (streamed)"
    with path.open("rb") as fh:
        try:
            return stream_json(ijson.basic_parse(fh, use_float=True), lim)
        except ijson.JSONError as exc:
            raise InvalidInput(f"invalid JSON: {exc}") from exc


def read_jsonl(path: Path, lim: Limits, meta: dict[str, Any]) -> Any:
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


def read_yaml(path: Path, settings: Settings, lim: Limits, meta: dict[str, Any]) -> Any:
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
        if "maximum nesting depth" in str(exc):  # libyaml's own limit (1 000 levels)
            raise InvalidInput(
                "this YAML is nested too deeply to read (over 1 000 levels of lists or maps)"
            ) from exc
        raise InvalidInput(f"invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    meta["documents"] = len(docs)
    value: Any = docs[0] if len(docs) == 1 else docs
    return shrink(value, lim)


def _check_yaml_size(nodes: list[Any]) -> None:
    """Refuse an alias bomb: the node graph's size with every alias expanded."""
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


def read_toml(path: Path, settings: Settings, lim: Limits, meta: dict[str, Any]) -> Any:
    text = _read_text(path, settings.MAX_JSON_PARSE_BYTES, "TOML")
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"invalid TOML: {exc}") from exc
    except RecursionError as exc:
        raise InvalidInput("this TOML is nested too deeply to read") from exc
    return shrink(value, lim)
