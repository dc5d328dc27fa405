"""Hierarchical memory of an agent run: plain data, serialisable to a JSON dict.

- Every action gets an importance score: decision 0.9, error 0.8, reasoning 0.7,
  user_prompt 0.6 (our choice: the user's words outrank routine tool traffic, but the
  goal is kept separately in GOAL, so old prompts need not be critical),
  tool_call 0.5, observation 0.4; failed +0.3; recurring error pattern +0.8;
  routine success (a successful tool_call or observation) -0.2; clamped to [0, 1].
- Working memory holds recent and important actions. When it holds more than
  `compression_threshold` actions (default 20, settable), the critical ones
  (importance > 0.7; the newest half-threshold of them) and the `recent_to_keep` newest
  (default 5) stay; the rest fold into counters rendered as
  `Executed 12 tools (10 successful); Read 3 files`.
- The decision trail (decision, rationale, impact, created_at) is never compressed.
- Error patterns are normalised (lowercase, numbers → N) and counted; a pattern
  seen `ERROR_ALERT_AFTER` (3) times raises an alert (flag + warning log).
- A goal with subtasks (name, done) and progress; a phase.

`render()` gives the GOAL / KEY DECISIONS / PREVIOUS ACTIONS / RECENT ACTIONS text
the `hierarchical` strategy sends; `snapshot()` gives SPEC §2's GET /memory shape;
`to_dict()` / `from_dict()` round-trip the whole state.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from contextq.errors import ValidationFailed
from contextq.history.types import KINDS, Kind, Message
from contextq.tokens import DEFAULT_ENCODING, count_tokens, truncate_to_tokens

log = logging.getLogger("contextq.history.memory")

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
DEFAULT_COMPRESSION_THRESHOLD = 20
DEFAULT_RECENT_TO_KEEP = 5
MAX_CONTENT_CHARS = 300
MAX_FILES_LISTED = 50

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")
_READ_TOOL = re.compile(r"read|open|view|cat|load|get_file|fetch", re.I)
_WRITE_TOOL = re.compile(r"write|edit|create|save|patch|apply|replace|delete", re.I)
_ERROR_TEXT = re.compile(r"^\s*(error|exception|traceback|fatal|failed)\b", re.I)
_PATH_KEYS = ("path", "file", "file_path", "filepath", "filename", "paths", "files")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def normalise_error(text: str) -> str:
    """`Timeout after 30s on port 8080` → `timeout after Ns on port N` (first 200 chars)."""
    lowered = _SPACE.sub(" ", text.strip().lower())
    return _NUMBER.sub("N", lowered)[:200]


def score_action(kind: str, *, success: bool | None = None, recurring: bool = False) -> float:
    """Importance of one action (see the module docstring for the figures)."""
    score = BASE_IMPORTANCE.get(kind, 0.4)
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

    def line(self) -> str:
        state = {True: " ok", False: " failed", None: ""}[self.success]
        head = f"{self.tool}: " if self.tool else ""
        return f"- [{self.kind}{state}] {head}{self.content}".rstrip()


@dataclass(slots=True)
class _Compressed:
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


class HierarchicalMemory:
    """Working memory, compressed history, decision trail, error patterns, goal, phase."""

    def __init__(
        self,
        *,
        compression_threshold: int | None = None,
        recent_to_keep: int | None = None,
    ) -> None:
        threshold = compression_threshold or DEFAULT_COMPRESSION_THRESHOLD
        recent = DEFAULT_RECENT_TO_KEEP if recent_to_keep is None else recent_to_keep
        if threshold < 2:
            raise ValidationFailed(
                "compression_threshold must be at least 2", field="compression_threshold"
            )
        if not 0 <= recent < threshold:
            raise ValidationFailed(
                "recent_to_keep must be at least 0 and below compression_threshold",
                field="recent_actions",
            )
        self.compression_threshold = threshold
        self.recent_to_keep = recent
        self.goal: str | None = None
        self.subtasks: list[dict[str, Any]] = []
        self.phase: str | None = None
        self.decisions: list[dict[str, Any]] = []
        self.error_patterns: dict[str, dict[str, Any]] = {}
        self.working: list[Action] = []
        self.compressed = _Compressed()
        self.total_actions = 0
        self.compressions = 0
        self._next_id = 1

    # -------------------------------------------------------------- writes

    def add_action(
        self,
        kind: str,
        content: str = "",
        *,
        tool: str | None = None,
        success: bool | None = None,
        files: Iterable[str] = (),
        message_id: str | None = None,
        created_at: str | None = None,
        importance: float | None = None,
    ) -> Action:
        """Record one action, scoring it and compressing working memory if needed."""
        if kind not in KINDS:
            raise ValidationFailed(f"kind must be one of {', '.join(sorted(KINDS))}", field="kind")
        when = created_at or _now()
        pattern = None
        recurring = False
        if kind == "error" or success is False:
            pattern = normalise_error(content or tool or kind)
            recurring = self._record_error(pattern, when)
        if importance is None:
            importance = score_action(kind, success=success, recurring=recurring)
        text = _SPACE.sub(" ", content).strip()
        if len(text) > MAX_CONTENT_CHARS:
            text = text[: MAX_CONTENT_CHARS - 1] + "…"
        action = Action(
            id=self._next_id,
            kind=cast(Kind, kind),
            content=text,
            importance=importance,
            tool=tool,
            success=success,
            files=list(files),
            pattern=pattern,
            message_id=message_id,
            created_at=when,
        )
        self._next_id += 1
        self.total_actions += 1
        self.working.append(action)
        if kind == "decision" and content:
            self.add_decision(content, created_at=when)
        if len(self.working) > self.compression_threshold:
            self._compress()
        return action

    def _record_error(self, pattern: str, when: str) -> bool:
        entry = self.error_patterns.setdefault(
            pattern, {"count": 0, "alert": False, "last_seen": when}
        )
        entry["count"] += 1
        entry["last_seen"] = when
        if entry["count"] >= ERROR_ALERT_AFTER and not entry["alert"]:
            entry["alert"] = True
            log.warning("recurring error pattern (%d times): %s", entry["count"], pattern)
        return bool(entry["count"] >= 2)

    def _compress(self) -> None:
        keep_recent = self.recent_to_keep
        older = self.working[: len(self.working) - keep_recent] if keep_recent else self.working[:]
        recent = self.working[len(older) :]
        # at most half the threshold of critical ones, so compression runs now and then,
        # not on every action once critical ones pile up
        cap = max(1, self.compression_threshold // 2)
        critical = [a for a in older if a.importance > CRITICAL_IMPORTANCE][-cap:]
        keep_ids = {a.id for a in critical}
        for action in older:
            if action.id not in keep_ids:
                self.compressed.fold(action)
        self.working = critical + recent
        self.compressions += 1

    def observe(self, message: Message) -> Action | None:
        """Record a stored message as an action (system messages are not actions)."""
        kind = infer_kind(message)
        if kind is None:
            return None
        tool = None
        files: list[str] = []
        success: bool | None = None
        call: Action | None = None
        content = message.text()
        if message.tool_calls:
            names = [str((c.get("function") or {}).get("name", "")) for c in message.tool_calls]
            tool = ", ".join(n for n in names if n) or None
            for tool_call in message.tool_calls:
                files.extend(_files_in((tool_call.get("function") or {}).get("arguments")))
            content = content or _call_text(message.tool_calls)
        elif message.role == "tool":
            success = kind != "error"
            call = self._settle_call(message.tool_call_id, success)
            tool = message.name or (call.tool if call else None)
        when = message.created_at.isoformat() if message.created_at else None
        action = self.add_action(
            kind,
            content,
            tool=tool,
            success=success,
            files=files,
            message_id=message.id,
            created_at=when,
            importance=message.importance,
        )
        action.call_ids = list(message.call_ids)
        return action

    def _settle_call(self, call_id: str | None, success: bool) -> Action | None:
        """Mark the tool_call action that `call_id` answers as (un)successful."""
        if call_id is None:
            return None
        for action in reversed(self.working):
            if call_id in action.call_ids:
                if action.success is None or (action.success and not success):
                    action.success = success
                    action.importance = score_action(action.kind, success=success)
                return action
        return None

    @classmethod
    def from_messages(
        cls,
        messages: Iterable[Message],
        *,
        compression_threshold: int | None = None,
        recent_to_keep: int | None = None,
    ) -> HierarchicalMemory:
        memory = cls(compression_threshold=compression_threshold, recent_to_keep=recent_to_keep)
        for message in messages:
            memory.observe(message)
        return memory

    def set_goal(self, text: str, subtasks: Iterable[str] = ()) -> None:
        names = [s.strip() for s in subtasks if s.strip()]
        if len(set(names)) != len(names):
            raise ValidationFailed("subtask names must be unique", field="subtasks")
        self.goal = text.strip() or None
        self.subtasks = [{"name": name, "done": False} for name in names]

    def complete_subtask(self, name: str) -> None:
        for task in self.subtasks:
            if task["name"] == name:
                task["done"] = True
                return
        raise ValidationFailed(f"no subtask named {name!r}", field="name")

    def add_decision(
        self, decision: str, *, rationale: str = "", impact: str = "", created_at: str | None = None
    ) -> dict[str, Any]:
        entry = {
            "decision": decision.strip(),
            "rationale": rationale.strip(),
            "impact": impact.strip(),
            "created_at": created_at or _now(),
        }
        self.decisions.append(entry)
        return entry

    def set_phase(self, phase: str) -> None:
        self.phase = phase.strip() or None

    # -------------------------------------------------------------- reads

    @property
    def progress(self) -> float:
        if not self.subtasks:
            return 0.0
        done = sum(1 for t in self.subtasks if t["done"])
        return round(done / len(self.subtasks), 4)

    def render(self, max_tokens: int | None = None, encoding: str = DEFAULT_ENCODING) -> str:
        """GOAL / KEY DECISIONS / ERROR PATTERNS / PREVIOUS ACTIONS / RECENT ACTIONS, or "".

        With `max_tokens`, the oldest decisions and actions are left out of the text
        (saying how many) until it fits; the stored trail itself is never cut.
        """
        decisions, actions = len(self.decisions), len(self.working)
        while True:
            text = self._render(decisions, actions)
            if max_tokens is None or count_tokens(text, encoding) <= max_tokens:
                return text
            if decisions == 0 and actions == 0:
                return truncate_to_tokens(text, max_tokens, encoding)[0]
            decisions, actions = decisions // 2, actions // 2

    def _render(self, decision_limit: int, action_limit: int) -> str:
        sections = [
            self._goal_section(),
            self._decision_section(decision_limit),
            self._error_section(),
            f"PREVIOUS ACTIONS: {summary}" if (summary := self.compressed.summary()) else "",
            self._recent_section(action_limit),
        ]
        return "\n\n".join(s for s in sections if s)

    def _goal_section(self) -> str:
        if not (self.goal or self.subtasks or self.phase):
            return ""
        done = sum(1 for t in self.subtasks if t["done"])
        lines = [f"GOAL: {self.goal or '(not set)'}"]
        if self.subtasks:
            lines[0] += f" (progress {done}/{len(self.subtasks)})"
            lines += [f"  [{'x' if t['done'] else ' '}] {t['name']}" for t in self.subtasks]
        if self.phase:
            lines.append(f"PHASE: {self.phase}")
        return "\n".join(lines)

    def _decision_section(self, limit: int) -> str:
        if not self.decisions:
            return ""
        lines = ["KEY DECISIONS:"]
        shown = self.decisions[len(self.decisions) - limit :] if limit else []
        if len(shown) < len(self.decisions):
            lines.append(f"- ({len(self.decisions) - len(shown)} earlier decisions not shown)")
        for d in shown:
            line = f"- {d['decision']}"
            if d["rationale"]:
                line += f" (why: {d['rationale']})"
            if d["impact"]:
                line += f" (impact: {d['impact']})"
            lines.append(line)
        return "\n".join(lines)

    def _error_section(self) -> str:
        recurring = [(p, e) for p, e in self.error_patterns.items() if e["count"] >= 2]
        if not recurring:
            return ""
        lines = ["ERROR PATTERNS:"]
        for pattern, entry in recurring:
            flag = " ALERT" if entry["alert"] else ""
            lines.append(f"- {pattern} (x{entry['count']}){flag}")
        return "\n".join(lines)

    def _recent_section(self, limit: int) -> str:
        if not self.working:
            return ""
        shown = self.working[len(self.working) - limit :] if limit else []
        lines = ["RECENT ACTIONS:"]
        if len(shown) < len(self.working):
            lines.append(f"- ({len(self.working) - len(shown)} older actions not shown)")
        lines += [a.line() for a in shown]
        return "\n".join(lines)

    def snapshot(self) -> dict[str, Any]:
        """SPEC §2 GET /memory: goal, phase, decisions, error_patterns, stats."""
        return {
            "goal": {
                "text": self.goal,
                "subtasks": [dict(t) for t in self.subtasks],
                "progress": self.progress,
            },
            "phase": self.phase,
            "decisions": [dict(d) for d in self.decisions],
            "error_patterns": [
                {
                    "pattern": p,
                    "count": e["count"],
                    "alert": e["alert"],
                    "last_seen": e["last_seen"],
                }
                for p, e in self.error_patterns.items()
            ],
            "stats": {
                "total_actions": self.total_actions,
                "working_memory": len(self.working),
                "critical_in_working_memory": sum(
                    a.importance > CRITICAL_IMPORTANCE for a in self.working
                ),
                "compressed_actions": self.compressed.actions,
                "compressions": self.compressions,
                "compressed_summary": self.compressed.summary(),
                "compression_threshold": self.compression_threshold,
                "alerts": sum(e["alert"] for e in self.error_patterns.values()),
            },
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "compression_threshold": self.compression_threshold,
            "recent_to_keep": self.recent_to_keep,
            "goal": self.goal,
            "subtasks": [dict(t) for t in self.subtasks],
            "phase": self.phase,
            "decisions": [dict(d) for d in self.decisions],
            "error_patterns": {p: dict(e) for p, e in self.error_patterns.items()},
            "working": [asdict(a) for a in self.working],
            "compressed": asdict(self.compressed),
            "total_actions": self.total_actions,
            "compressions": self.compressions,
            "next_id": self._next_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> HierarchicalMemory:
        """Rebuild from `to_dict()` output (None or {} → an empty memory)."""
        data = data or {}
        memory = cls(
            compression_threshold=data.get("compression_threshold"),
            recent_to_keep=data.get("recent_to_keep"),
        )
        memory.goal = data.get("goal")
        memory.subtasks = [dict(t) for t in data.get("subtasks", [])]
        memory.phase = data.get("phase")
        memory.decisions = [dict(d) for d in data.get("decisions", [])]
        memory.error_patterns = {p: dict(e) for p, e in data.get("error_patterns", {}).items()}
        memory.working = [Action(**a) for a in data.get("working", [])]
        memory.compressed = _Compressed(**data.get("compressed", {}))
        memory.total_actions = int(data.get("total_actions", 0))
        memory.compressions = int(data.get("compressions", 0))
        memory._next_id = int(data.get("next_id", memory.total_actions + 1))
        return memory


def _call_text(calls: list[dict[str, Any]]) -> str:
    parts = []
    for call in calls:
        function = call.get("function") or {}
        parts.append(f"{function.get('name', '')}({str(function.get('arguments', ''))[:120]})")
    return "; ".join(parts)


def _files_in(arguments: Any) -> list[str]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return []
    if not isinstance(arguments, dict):
        return []
    found: list[str] = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    return found
