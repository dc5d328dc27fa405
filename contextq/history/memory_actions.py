"""Actions of the hierarchical memory: importance scores, the phase's weight, error
normalisation, and the counters older routine actions fold into.

Importance of one action (clamped to [0, 1]):

- base by kind: decision 0.9, error 0.8, reasoning 0.7, user_prompt 0.6 (the user's words
  outrank routine tool traffic; the goal itself is kept apart in GOAL), tool_call 0.5,
  observation 0.4;
- failed +0.3; a recurring error pattern +0.8; a routine success (a successful tool_call
  or observation) -0.2;
- the phase (seed 001: what matters depends on where the agent is): while `debugging`,
  errors +0.2 and observations +0.1; `testing`: errors and observations +0.1;
  `implementation`: tool calls +0.1, decisions +0.05; `planning`: prompts, reasoning and
  decisions +0.1; `exploration`: observations and reasoning +0.1; `review`: decisions and
  reasoning +0.1. Other phase names add nothing. Actions above 0.7 are critical: they
  survive compression.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextq.history.types import Kind, Message

BASE_IMPORTANCE: dict[str, float] = {
    "decision": 0.9,
    "error": 0.8,
    "reasoning": 0.7,
    "user_prompt": 0.6,
    "tool_call": 0.5,
    "observation": 0.4,
}
FAILED_BONUS = 0.3
RECURRING_ERROR_BONUS = 0.8
ROUTINE_SUCCESS_PENALTY = 0.2
CRITICAL_IMPORTANCE = 0.7
ERROR_ALERT_AFTER = 3
MAX_CONTENT_CHARS = 300
MAX_FILES_LISTED = 50

PHASE_BONUS: dict[str, dict[str, float]] = {
    "planning": {"user_prompt": 0.1, "reasoning": 0.1, "decision": 0.1},
    "exploration": {"observation": 0.1, "reasoning": 0.1},
    "implementation": {"tool_call": 0.1, "decision": 0.05},
    "debugging": {"error": 0.2, "observation": 0.1},
    "testing": {"error": 0.1, "observation": 0.1},
    "review": {"decision": 0.1, "reasoning": 0.1},
}
# a phase as people write it ("Debug", "bug fixing", "write code") → one of PHASE_BONUS
_PHASE_STEMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(plan|design|scop)"), "planning"),
    (re.compile(r"\b(explor|research|investigat|analy|discover|read)"), "exploration"),
    (re.compile(r"\b(debug|bug|fix|diagnos|troubleshoot)"), "debugging"),
    (re.compile(r"\b(test|verif|validat|qa)"), "testing"),
    (re.compile(r"\b(review|refin|clean)"), "review"),
    (re.compile(r"\b(implement|cod|build|develop|writ|execut)"), "implementation"),
)

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")
_READ_TOOL = re.compile(r"read|open|view|cat|load|get_file|fetch", re.I)
_WRITE_TOOL = re.compile(r"write|edit|create|save|patch|apply|replace|delete", re.I)


def writes_files(tool: str | None) -> bool:
    """Whether a tool of this name changes the files it names (edit_file, write, patch…)."""
    return bool(tool and _WRITE_TOOL.search(tool))


_ERROR_TEXT = re.compile(r"^\s*(error|exception|traceback|fatal|failed)\b", re.I)
_PATH_KEYS = (
    "path",
    "file",
    "file_path",
    "filepath",
    "filename",
    "file_name",
    "file_name1",
    "file_name2",
    "file_names",
    "filenames",
    "paths",
    "files",
)
# keys that name a path in file tools and something else elsewhere (a city, a URL): a
# value counts when it looks like a path (a slash, or a name with an extension)
_MAYBE_PATH_KEYS = ("source", "destination", "src", "dst", "dest", "target")
_LOOKS_LIKE_PATH = re.compile(r"^(?!\w+://)[\w.~-]*/[\w./~-]+$|^[\w.-]+\.[A-Za-z0-9]{1,8}$")


def normalise_error(text: str) -> str:
    """`Timeout after 30s on port 8080` → `timeout after Ns on port N` (first 200 chars)."""
    lowered = _SPACE.sub(" ", text.strip().lower())
    return _NUMBER.sub("N", lowered)[:200]


def normalise_phase(phase: str | None) -> str | None:
    """The PHASE_BONUS key a phase name means, or None (no bonus)."""
    if not phase:
        return None
    lowered = phase.strip().lower()
    if lowered in PHASE_BONUS:
        return lowered
    for pattern, name in _PHASE_STEMS:
        if pattern.search(lowered):
            return name
    return None


def score_action(
    kind: str,
    *,
    success: bool | None = None,
    recurring: bool = False,
    phase: str | None = None,
) -> float:
    """Importance of one action (see the module docstring for the figures)."""
    score = BASE_IMPORTANCE.get(kind, 0.4)
    phase_key = normalise_phase(phase)
    if phase_key is not None:
        score += PHASE_BONUS[phase_key].get(kind, 0.0)
    if success is False:
        score += FAILED_BONUS
    if recurring:
        score += RECURRING_ERROR_BONUS
    if success is True and kind in ("tool_call", "observation"):
        score -= ROUTINE_SUCCESS_PENALTY
    return min(1.0, max(0.0, round(score, 4)))


def infer_kind(message: Message) -> Kind | None:
    """The action kind of a message: its own `kind`, else guessed from its role."""
    if message.kind is not None:
        return message.kind
    if message.role == "user":
        return "user_prompt"
    if message.role == "assistant":
        return "tool_call" if message.tool_calls else "reasoning"
    if message.role == "tool":
        return "error" if _ERROR_TEXT.match(message.text()) else "observation"
    return None


def score_message(message: Message) -> float:
    """A message's stored importance, or its kind's score (pinned and system: 1.0)."""
    if message.importance is not None:
        return message.importance
    if message.pinned or message.role == "system":
        return 1.0
    kind = infer_kind(message) or "observation"
    return score_action(kind, success=False if kind == "error" else None)


def clip_content(content: str) -> str:
    text = _SPACE.sub(" ", content).strip()
    if len(text) > MAX_CONTENT_CHARS:
        text = text[: MAX_CONTENT_CHARS - 1] + "…"
    return text


@dataclass(slots=True)
class Action:
    id: int
    kind: Kind
    content: str
    importance: float
    tool: str | None = None
    success: bool | None = None
    files: list[str] = field(default_factory=list)
    pattern: str | None = None
    message_id: str | None = None
    created_at: str = ""
    call_ids: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        state = {True: " ok", False: " failed", None: ""}[self.success]
        head = f"{self.tool}: " if self.tool else ""
        return f"- [{self.kind}{state}] {head}{self.content}".rstrip()


@dataclass(slots=True)
class CompressedActions:
    """Counters the older routine actions fold into: `Executed 12 tools (10 successful)…`."""

    actions: int = 0
    tools: int = 0
    tools_ok: int = 0
    files_read: list[str] = field(default_factory=list)
    files_written: list[str] = field(default_factory=list)
    files_read_count: int = 0
    files_written_count: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def fold(self, action: Action) -> None:
        self.actions += 1
        if action.kind == "tool_call":
            self.tools += 1
            self.tools_ok += action.success is not False
            if action.files and action.tool:
                if _WRITE_TOOL.search(action.tool):
                    self._add(self.files_written, action.files, "files_written_count")
                elif _READ_TOOL.search(action.tool):
                    self._add(self.files_read, action.files, "files_read_count")
        else:
            self.by_kind[action.kind] = self.by_kind.get(action.kind, 0) + 1

    def _add(self, seen: list[str], files: list[str], counter: str) -> None:
        for name in files:
            if name not in seen:
                setattr(self, counter, getattr(self, counter) + 1)
                if len(seen) < MAX_FILES_LISTED:
                    seen.append(name)

    def summary(self) -> str:
        parts: list[str] = []
        if self.tools:
            parts.append(f"Executed {_n(self.tools, 'tool')} ({self.tools_ok} successful)")
        if self.files_read_count:
            parts.append(f"Read {_n(self.files_read_count, 'file')}")
        if self.files_written_count:
            parts.append(f"Edited {_n(self.files_written_count, 'file')}")
        labels = {
            "observation": "observation",
            "reasoning": "reasoning step",
            "user_prompt": "user prompt",
            "error": "error",
            "decision": "decision",
        }
        for kind, label in labels.items():
            if self.by_kind.get(kind):
                parts.append(_n(self.by_kind[kind], label))
        return "; ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def call_text(calls: list[dict[str, Any]]) -> str:
    parts = []
    for call in calls:
        function = call.get("function") or {}
        parts.append(f"{function.get('name', '')}({str(function.get('arguments', ''))[:120]})")
    return "; ".join(parts)


def files_in(arguments: Any) -> list[str]:
    """Paths named by a tool call's arguments (a JSON string or an object)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return []
    if not isinstance(arguments, Mapping):
        return []
    found: list[str] = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    for key in _MAYBE_PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and _LOOKS_LIKE_PATH.match(value):
            found.append(value)
    return found
