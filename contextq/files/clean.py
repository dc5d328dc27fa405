"""The one cleaner of processed text: what no model and no database wants.

`clean_text` is called by `pipeline.finalize` on every processed text (and by
`fulltext` on every indexed section), so nothing downstream strips anything:

- NUL and the other C0/C1 control characters are removed, except tab and
  newline; CR, CRLF, vertical tab and form feed become a newline;
- ANSI escape sequences (colours in notebook tracebacks and logs) are removed whole;
- U+FFFE, U+FFFF and the other Unicode noncharacters, lone surrogates, and U+FFFD
  are removed. U+FFFD is what a decoder puts where bytes did not decode; it carries no
  text, only tokens.
"""

from __future__ import annotations

import re
from typing import Any

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_LINE_BREAKS = re.compile(r"\r\n?|[\x0b\x0c\x85\u2028\u2029]")
_UNWANTED = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffd\ufffe\uffff\ud800-\udfff"
    "\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0010fffe\U0010ffff]"
)
_ANY_BAD = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufdd0-\ufdef\ufffd\ufffe\uffff\ud800-\udfff"
    "\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0010fffe\U0010ffff]"
)


def clean_text(text: str) -> str:
    """`text` without control characters (tab and newline kept), noncharacters or U+FFFD."""
    if not _ANY_BAD.search(text):
        return text  # the common case: one C-speed scan
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = _LINE_BREAKS.sub("\n", text)
    return _UNWANTED.sub("", text)


def clean_value(value: Any) -> Any:
    """Strings cleaned inside a JSON-like value (metadata goes to JSON columns too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(v) for v in value]
    return value
