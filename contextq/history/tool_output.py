"""Reading tool output as an agent harness writes it: markup (`<output>`,
`<returncode>`), JSON envelopes (`{"exit_code": 1, "stdout": "…"}`), tracebacks
(Python; JS/Java `at …` frames), error lines of compilers, test runners and shells.

Shared by the extractive summariser (`harvest`) and the memory, whose error patterns are
taken from `main_error` (the error itself, not the envelope or the frames around it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s+[^<>\n]{0,200})?/?>")
_TRACEBACK_START = re.compile(r"^\s*Traceback \(most recent call last\):?\s*$")
PY_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?')
_AT_FRAME = re.compile(r"^\s+at\s+(?:\S+?\s*\()?([^()\s]+?):(\d+)(?::\d+)?\)?\s*$")
_LOCATED = re.compile(
    r"^\s*(\S+?\.\w{1,8}):(\d+):\s*(?:\d+:\s*)?(.*\b(?:\w*Error|error|Exception|fatal)\b.*)$"
)
_EXCEPTION = re.compile(
    r"^\s*(?:E\s+)?(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault|Failure))\b:?"
)
_ERROR_LINE = re.compile(
    r"\s*(?:E\s{2,}\S|(?i:error|fatal|panic|failed)(?:\[[\w-]+\])?[:!]|(?:FAILED|FAIL|ERROR)\b"
    r"|npm ERR!)"
)
_PYTEST_E = re.compile(r"E\s{2,}")
_ERROR_PHRASES = (
    "command not found",
    "no such file or directory",
    "permission denied",
    "segmentation fault",
    "non-zero exit",
)
_EXIT_CODE = re.compile(r"exit (?:code|status) [1-9]")
_ENVELOPE_KEYS = ("stdout", "stderr", "output", "error", "result", "content", "message")


@dataclass(frozen=True, slots=True)
class ErrorSpot:
    message: str  # the error's own line: `ValueError: bad header`
    location: str | None = None  # innermost `path:line in func`
    path: str | None = None  # the file of that location

    def text(self) -> str:
        return f"{self.message} (at {self.location})" if self.location else self.message


def readable(text: str) -> str:
    """Tool output with its envelope removed: a JSON object's text fields, markup tags."""
    stripped = text.lstrip()
    if stripped.startswith("{") and stripped.rstrip().endswith("}"):
        text = _unwrap_json(text)
    return _TAG.sub(" ", text) if "<" in text else text


def strip_markup(text: str) -> str:
    return _TAG.sub(" ", text) if "<" in text else text


def _unwrap_json(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    parts = [str(data[k]) for k in _ENVELOPE_KEYS if isinstance(data.get(k), str) and data[k]]
    code = data.get("exit_code", data.get("returncode"))
    if isinstance(code, int) and code:
        parts.append(f"(exit code {code})")
    return "\n".join(parts) if parts else text


def is_error_line(line: str) -> bool:
    return bool(
        _ERROR_LINE.match(line)
        or _EXCEPTION.match(line)
        or _LOCATED.match(line)
        or _has_error_phrase(line.lower())
    )


def _has_error_phrase(lowered: str) -> bool:
    if any(phrase in lowered for phrase in _ERROR_PHRASES):
        return True
    return "exit " in lowered and _EXIT_CODE.search(lowered) is not None


def error_spot(line: str) -> ErrorSpot:
    """An error line as a spot: `src/a.c:10: error: x` → message + location."""
    located = _LOCATED.match(line)
    if located:
        path = located.group(1)
        return ErrorSpot(located.group(3).strip(), f"{path}:{located.group(2)}", path)
    stripped = line.strip()
    return ErrorSpot(stripped[1:].strip() if _PYTEST_E.match(stripped) else stripped)


def tracebacks(text: str) -> tuple[str, list[ErrorSpot]]:
    """Remove each traceback from `text`; return the rest and one spot per traceback."""
    lines = text.splitlines()
    kept: list[str] = []
    found: list[ErrorSpot] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _TRACEBACK_START.match(line):
            spot, i = _python_traceback(lines, i + 1)
            found.append(spot)
        elif _AT_FRAME.match(line) and kept:  # JS/Java: the error line comes first
            header = kept.pop().strip() or "error"
            location, i = _at_frames(lines, i)
            found.append(ErrorSpot(header, location, location.rsplit(":", 1)[0]))
        else:
            kept.append(line)
            i += 1
    return "\n".join(kept), found


def _python_traceback(lines: list[str], i: int) -> tuple[ErrorSpot, int]:
    location = path = None
    while i < len(lines):
        frame = PY_FRAME.match(lines[i])
        if frame:
            path = frame.group(1)
            location = f"{path}:{frame.group(2)}" + (
                f" in {frame.group(3)}" if frame.group(3) else ""
            )
            i += 1
        elif lines[i].startswith((" ", "\t")) or not lines[i].strip():
            i += 1  # the source line under a frame, or a blank
        else:
            break
    message = lines[i].strip() if i < len(lines) else "Traceback"
    return ErrorSpot(message, location, path), i + 1


def _at_frames(lines: list[str], i: int) -> tuple[str, int]:
    first = _AT_FRAME.match(lines[i])
    location = f"{first.group(1)}:{first.group(2)}" if first else "?:0"
    while i < len(lines) and _AT_FRAME.match(lines[i]):
        i += 1
    return location, i


def main_error(text: str) -> str:
    """The line that says what went wrong: the last traceback's error, else the first
    error line, else the first non-empty line (what an error pattern is made of)."""
    rest, spots = tracebacks(readable(text))
    if spots:
        return spots[-1].message
    lines = [line.strip() for line in rest.splitlines() if line.strip()]
    for line in lines:
        if is_error_line(line):
            return error_spot(line).message
    return lines[0] if lines else text.strip()
