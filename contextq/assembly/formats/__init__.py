"""The output formats, one module each behind one protocol (`contextq.assembly.wire`).

`FORMATS` maps each name of `contextq.history.types.FormatName` (the `format=` of
docs/history.md#the-answer) to its format; `tools_for` gives tool definitions in one. A
new format is one module here (a `WireFormat` subclass and its instance) and one
registration: its name in `FormatName` and its instance below (docs/architecture.md,
"Where new things go").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from contextq.assembly.formats.anthropic import ANTHROPIC
from contextq.assembly.formats.base import OPENING_TEXT
from contextq.assembly.formats.gemini import GEMINI
from contextq.assembly.formats.openai import OPENAI
from contextq.assembly.formats.responses import RESPONSES
from contextq.assembly.tools import Tool
from contextq.assembly.wire import WireFormat
from contextq.errors import ValidationFailed
from contextq.history.types import FORMAT_NAMES, FormatName, check_format

FORMATS: Mapping[FormatName, WireFormat] = MappingProxyType(
    {wire.name: wire for wire in (OPENAI, ANTHROPIC, RESPONSES, GEMINI)}
)
assert tuple(FORMATS) == FORMAT_NAMES, "every FormatName has its module, in the same order"


def wire_format(name: str) -> WireFormat:
    """The format named `name`; ValidationFailed naming `format` for an unknown one."""
    return FORMATS[check_format(name)]


def tools_for(tools: Sequence[Tool], fmt: str) -> list[dict[str, Any]]:
    """The definitions in the target format (ValidationFailed for a vendor's own tool
    asked for in a format that does not take it)."""
    wire = wire_format(fmt)
    out: list[dict[str, Any]] = []
    for tool in tools:
        if tool.native is None:
            out.append(wire.tool(tool))
            continue
        if tool.native_format not in wire.native_tools:
            raise ValidationFailed(
                f"tool {tool.name!r} is a {tool.native_format} built-in tool; it has no "
                f"{fmt} form (drop it from `tools` or ask for format={tool.native_format})",
                field="tools",
            )
        out.append(dict(tool.native))
    return wire.tools(out)


__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "OPENING_TEXT",
    "FormatName",
    "WireFormat",
    "tools_for",
    "wire_format",
]
