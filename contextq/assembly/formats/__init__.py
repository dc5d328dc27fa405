"""The output formats, one module each behind one protocol (`base.WireFormat`).

`FORMATS` maps each name of `contextq.history.types.FormatName` (the `format=` of
docs/history.md#the-answer) to its format. A new format is one module here (a `WireFormat` subclass
and its instance) and one registration: its name in `FormatName` and its instance below
(docs/architecture.md, "Where new things go").
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from contextq.assembly.formats.anthropic import ANTHROPIC
from contextq.assembly.formats.base import OPENING_TEXT, WireFormat
from contextq.assembly.formats.gemini import GEMINI
from contextq.assembly.formats.openai import OPENAI
from contextq.assembly.formats.responses import RESPONSES
from contextq.history.types import FORMAT_NAMES, FormatName, check_format

FORMATS: Mapping[FormatName, WireFormat] = MappingProxyType(
    {wire.name: wire for wire in (OPENAI, ANTHROPIC, RESPONSES, GEMINI)}
)
assert tuple(FORMATS) == FORMAT_NAMES, "every FormatName has its module, in the same order"


def wire_format(name: str) -> WireFormat:
    """The format named `name`; ValidationFailed naming `format` for an unknown one."""
    return FORMATS[check_format(name)]


__all__ = ["FORMATS", "FORMAT_NAMES", "OPENING_TEXT", "FormatName", "WireFormat", "wire_format"]
