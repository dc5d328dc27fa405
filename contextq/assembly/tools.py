"""Tool definitions: read in OpenAI's function-tool form or Anthropic's, given back in
the target format (the answer's `tools`, docs/history.md#the-answer: each format's `tool`,
`contextq.assembly.formats.tools_for`), and the "when to use which tool" section.

Read: OpenAI's `{"type": "function", "function": {"name", "description",
"parameters"}}` (a bare `{"name", "description", "parameters"}` is taken too), or
Anthropic's `{"name", "description", "input_schema"}`. Anthropic's server tools (a
`type` such as `web_search_20250305`) and OpenAI's non-function tools have no neutral
form: they are passed through as given into a format that takes their vendor's shapes
(`WireFormat.native_tools`) and refused for any other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from contextq.errors import ValidationFailed

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_EMPTY_SCHEMA: Mapping[str, Any] = MappingProxyType({"type": "object", "properties": {}})
GUIDANCE_DESCRIPTION_CHARS = 200


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool definition, format-neutral (`native` keeps a tool with no equivalent)."""

    name: str
    description: str
    schema: Mapping[str, Any]
    native: Mapping[str, Any] | None = None  # passed through as given
    native_format: str | None = None  # the vendor of a passed-through tool: openai | anthropic


def parse_tools(tools: Sequence[Any] | None, *, field: str = "tools") -> tuple[Tool, ...]:
    """Tool definitions as given (either format); ValidationFailed names `tools[i]`."""
    if tools is None:
        return ()
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise ValidationFailed(f"{field} must be a list of tool definitions", field=field)
    parsed = [_parse_one(tool, f"{field}[{i}]") for i, tool in enumerate(tools)]
    names = [t.name for t in parsed]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValidationFailed(
            f"{field}: tool names must be unique ({duplicates[0]!r})", field=field
        )
    return tuple(parsed)


def _parse_one(tool: Any, where: str) -> Tool:
    if not isinstance(tool, Mapping):
        raise ValidationFailed(f"{where} must be an object", field=where)
    kind = tool.get("type")
    if kind == "function" or (kind is None and "function" in tool):
        function = tool.get("function")
        if not isinstance(function, Mapping):
            raise ValidationFailed(f"{where}.function must be an object", field=f"{where}.function")
        return _neutral(function, "parameters", f"{where}.function")
    if kind is None:  # Anthropic's custom tool, or a bare function definition
        key = "input_schema" if "input_schema" in tool else "parameters"
        return _neutral(tool, key, where)
    if kind == "custom" and "input_schema" in tool:
        return _neutral(tool, "input_schema", where)
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationFailed(f"{where}.name must be a non-empty string", field=f"{where}.name")
    native_format = "anthropic" if re.search(r"_\d{8}$", str(kind)) else "openai"
    description = tool.get("description")
    return Tool(
        name=name,
        description=description if isinstance(description, str) else "",
        schema=_EMPTY_SCHEMA,
        native=MappingProxyType(dict(tool)),
        native_format=native_format,
    )


def _neutral(definition: Mapping[str, Any], schema_key: str, where: str) -> Tool:
    name = definition.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValidationFailed(
            f"{where}.name must be 1-128 letters, digits, _ or - (got {name!r})",
            field=f"{where}.name",
        )
    description = definition.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise ValidationFailed(
            f"{where}.description must be a string", field=f"{where}.description"
        )
    schema = definition.get(schema_key, _EMPTY_SCHEMA)
    if not isinstance(schema, Mapping):
        raise ValidationFailed(
            f"{where}.{schema_key} must be a JSON schema object", field=f"{where}.{schema_key}"
        )
    return Tool(name=name, description=description, schema=MappingProxyType(dict(schema)))


def guidance(tools: Sequence[Tool]) -> str:
    """The "when to use which tool" lines: each tool's name and the first sentence of its
    description (at most GUIDANCE_DESCRIPTION_CHARS characters)."""
    lines = []
    for tool in tools:
        text = _first_sentence(tool.description)
        lines.append(f"- `{tool.name}`: {text}" if text else f"- `{tool.name}`")
    return "\n".join(lines)


def _first_sentence(description: str) -> str:
    text = " ".join(description.split())
    match = re.search(r"(?<=[.!?])\s", text)
    if match:
        text = text[: match.start()]
    if len(text) > GUIDANCE_DESCRIPTION_CHARS:
        text = text[: GUIDANCE_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return text
