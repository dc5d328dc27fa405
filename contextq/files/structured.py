"""JSON, JSONL, YAML, TOML, XML → a truncated view with visible markers.

An XML file whose root is an RSS or Atom feed becomes a list of items instead (`feeds`).
Readers: `structured_readers` (JSON, JSONL, YAML, TOML) and `xml_view`.

Cuts (`json_view`): containers deeper than MAX_NESTING_DEPTH become `"<truncated: depth>"`,
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
from pathlib import Path
from typing import Any

import yaml

from contextq.errors import InvalidInput
from contextq.files.feeds import is_feed, read_feed, render_feed
from contextq.files.json_view import Limits
from contextq.files.registry import ProcessContext, StreamInfo
from contextq.files.result import FileExtractionResult, TruncationInfo
from contextq.files.structured_readers import read_json, read_jsonl, read_toml, read_yaml
from contextq.files.text import file_tokens
from contextq.files.xml_view import read_xml

# ---------------------------------------------------------------- processor


class StructuredProcessor:
    name = "structured"

    def accepts(self, info: StreamInfo) -> bool:
        return info.category == "structured"

    def process(self, path: Path, info: StreamInfo, ctx: ProcessContext) -> FileExtractionResult:
        settings = ctx.settings
        lim = Limits.of(settings)
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
        dumped = yaml.safe_dump(view, sort_keys=False, allow_unicode=True, width=120)
        return f"```yaml\n{dumped.rstrip()}\n```"
    buf = io.StringIO()
    json.dump(view, buf, indent=2, ensure_ascii=False, default=str)
    return f"```json\n{buf.getvalue()}\n```"
