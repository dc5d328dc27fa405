"""Hierarchical memory of an agent run (seed 001's ContextManager): plain data, no I/O.

- Every action gets an importance score (`memory_actions`: kind, success, recurring
  error, and the current phase).
- Working memory holds recent and important actions. When it holds more than
  `compression_threshold * max_working_memory` actions (`memory_options`), the newest
  `recent_to_keep` (5, as seed 001) and the newest critical ones (importance > 0.7, up to
  `max_working_memory` in all) stay; the rest fold
  into counters rendered as `Executed 12 tools (10 successful); Read 3 files`.
- The decision trail (decision, rationale, impact high|medium|low, created_at) is never
  compressed.
- Error patterns are normalised (lowercase, numbers → N) and counted; the third
  occurrence of a pattern raises an alert (flag + warning log).
- A goal with subtasks (name, done) and progress; a phase, which weighs importance.
- Provenance (docs/provenance.md): the goal, each subtask, decision and error pattern keeps the seqs
  of the messages it came from (`goal_seqs`, and `seqs` in each entry): a decision or an
  error observed in a message gets that message's seq; a write through the API may name
  them; a compaction matches the others back to the messages it reads.

Reads: `get_context_for_agent()` (the GOAL / KEY DECISIONS / PREVIOUS ACTIONS / RECENT
ACTIONS text within `max_context_tokens`), `stats()`, `snapshot()` (GET /memory).
State: `to_dict()` / `from_dict()` (the stored row), `export()` / `import_state()`
(seed 001's save_state / load_state; `import_state(m.export()) == m`), and
`memory_checkpoint()` (the private-data document of
docs/workspaces.md#private-data-conversation-and-memory-checkpoints).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from contextq.errors import ValidationFailed
from contextq.history import memory_state, memory_view
from contextq.history.memory_actions import (
    CRITICAL_IMPORTANCE,
    ERROR_ALERT_AFTER,
    Action,
    call_text,
    clip_content,
    files_in,
    infer_kind,
    normalise_error,
    score_action,
    score_message,
)
from contextq.history.memory_options import MemoryOptions
from contextq.history.memory_state import MemoryState, memory_checkpoint
from contextq.history.seq_markers import merge_seqs
from contextq.history.tool_output import main_error
from contextq.history.types import KINDS, Kind, Message
from contextq.tokens import DEFAULT_ENCODING

__all__ = [
    "CRITICAL_IMPORTANCE",
    "HierarchicalMemory",
    "MemoryOptions",
    "memory_checkpoint",
    "normalise_error",
    "score_action",
    "score_message",
]

log = logging.getLogger("contextq.history.memory")

IMPACTS = ("high", "medium", "low")
ITERATION_KINDS = frozenset({"tool_call", "reasoning", "decision"})  # one model step each
MAX_METADATA_CHARS = 4_000


def _now() -> str:
    return datetime.now(UTC).isoformat()


class HierarchicalMemory(MemoryState):
    """Working memory, compressed history, decision trail, error patterns, goal, phase
    (the fields: `MemoryState`)."""

    def __init__(
        self,
        *,
        options: MemoryOptions | None = None,
        max_working_memory: int | None = None,
        max_context_tokens: int | None = None,
        compression_threshold: float | None = None,
        recent_to_keep: int | None = None,
    ) -> None:
        overrides = {
            "max_working_memory": max_working_memory,
            "max_context_tokens": max_context_tokens,
            "compression_threshold": compression_threshold,
            "recent_to_keep": recent_to_keep,
        }
        given = {k: v for k, v in overrides.items() if v is not None}
        base = options or MemoryOptions()
        super().__init__(options=MemoryOptions.parse(given, base=base, field="options"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HierarchicalMemory) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable

    # -------------------------------------------------------------- writes

    def add_action(
        self,
        action_type: str,
        content: str = "",
        success: bool | None = True,
        metadata: Mapping[str, Any] | None = None,
        *,
        tool: str | None = None,
        files: Iterable[str] = (),
        message_id: str | None = None,
        created_at: str | None = None,
        importance: float | None = None,
        seq: int | None = None,
    ) -> Action:
        """Record one action (seed 001), scoring it and compressing if needed.

        `metadata` (a JSON object) is kept with the action; its `tool` and path keys
        (`path`, `file`, `files`, …) name the tool and the files, its `rationale` and
        `impact` qualify a decision. `seq`: the message it was observed in (the source
        of the decision or error pattern it records).
        """
        if action_type not in KINDS:
            raise ValidationFailed(
                f"action_type must be one of {', '.join(sorted(KINDS))}", field="action_type"
            )
        meta = _clean_metadata(metadata)
        tool = tool or (meta.get("tool") if isinstance(meta.get("tool"), str) else None)
        when = created_at or _now()
        pattern = None
        recurring = False
        if action_type == "error" or success is False:
            said = main_error(content) if content.strip() else (tool or action_type)
            seqs = () if seq is None else (seq,)
            entry = self.track_error_pattern(said, seen_at=when, seqs=seqs)
            pattern, recurring = entry["pattern"], entry["count"] >= 2
        if importance is None:
            importance = score_action(
                action_type, success=success, recurring=recurring, phase=self.phase
            )
        action = Action(
            id=self.next_id,
            kind=cast(Kind, action_type),
            content=clip_content(content),
            importance=importance,
            tool=tool,
            success=success,
            files=[*files, *files_in(meta)],
            pattern=pattern,
            message_id=message_id,
            created_at=when,
            metadata=meta,
        )
        self._record(action, meta, content, seq)
        return action

    def _record(
        self, action: Action, meta: Mapping[str, Any], content: str, seq: int | None
    ) -> None:
        """Count a new action, keep it in working memory, note a decision, compress."""
        self.next_id += 1
        self.total_actions += 1
        self.iterations += action.kind in ITERATION_KINDS
        self.working.append(action)
        if action.kind == "decision" and content.strip():
            impact = meta.get("impact")
            self.add_decision(
                content,
                str(meta.get("rationale", "")),
                impact if isinstance(impact, str) else None,
                created_at=action.created_at,
                seqs=() if seq is None else (seq,),
            )
        if len(self.working) > self.options.compression_limit:
            self._compress()

    def track_error_pattern(
        self, error: str, *, seen_at: str | None = None, seqs: Iterable[int] = ()
    ) -> dict[str, Any]:
        """Count `error` under its normalised pattern; the third occurrence raises an alert.
        `seqs`: the messages it was seen in (kept with the pattern, capped).

        Returns `{"pattern", "count", "alert", "last_seen"}`.
        """
        pattern = normalise_error(error) or "error"
        when = seen_at or _now()
        entry = self.error_patterns.setdefault(
            pattern, {"count": 0, "alert": False, "last_seen": when}
        )
        entry["count"] += 1
        entry["last_seen"] = when
        if seqs or "seqs" in entry:
            entry["seqs"] = list(merge_seqs(entry.get("seqs", ()), seqs))
        if entry["count"] >= ERROR_ALERT_AFTER and not entry["alert"]:
            entry["alert"] = True
            log.warning("recurring error pattern (%d times): %s", entry["count"], pattern)
        return {"pattern": pattern, **{k: entry[k] for k in ("count", "alert", "last_seen")}}

    def _compress(self) -> None:
        recent_count = self.options.recent
        split = len(self.working) - recent_count
        older, recent = self.working[:split], self.working[split:]
        cap = self.options.critical_cap
        critical = [a for a in older if a.importance > CRITICAL_IMPORTANCE]
        critical = critical[-cap:] if cap else []
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
        content = message.text()
        if message.tool_calls:
            names = [str((c.get("function") or {}).get("name", "")) for c in message.tool_calls]
            tool = ", ".join(n for n in names if n) or None
            for tool_call in message.tool_calls:
                files.extend(files_in((tool_call.get("function") or {}).get("arguments")))
            content = content or call_text(message.tool_calls)
        elif message.role == "tool":
            success = kind != "error"
            call = self._settle_call(message.tool_call_id, success)
            tool = message.name or (call.tool if call else None)
        when = message.created_at.isoformat() if message.created_at else None
        action = self.add_action(
            kind,
            content,
            success,
            tool=tool,
            files=files,
            message_id=message.id,
            created_at=when,
            importance=message.importance,
            seq=message.seq,
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
                    action.importance = score_action(action.kind, success=success, phase=self.phase)
                return action
        return None

    @classmethod
    def from_messages(
        cls,
        messages: Iterable[Message],
        *,
        options: MemoryOptions | None = None,
        compression_threshold: float | None = None,
        recent_to_keep: int | None = None,
    ) -> HierarchicalMemory:
        memory = cls(
            options=options,
            compression_threshold=compression_threshold,
            recent_to_keep=recent_to_keep,
        )
        for message in messages:
            memory.observe(message)
        return memory

    def set_goal(
        self, text: str, subtasks: Iterable[str] = (), *, seqs: Iterable[int] = ()
    ) -> None:
        """The goal and its subtasks; `seqs`: the messages that state them, if known."""
        names = [s.strip() for s in subtasks if s.strip()]
        if len(set(names)) != len(names):
            raise ValidationFailed("subtask names must be unique", field="subtasks")
        cited = list(merge_seqs(seqs))
        self.goal = text.strip() or None
        self.goal_seqs = cited
        self.subtasks = [{"name": name, "done": False, "seqs": cited} for name in names]

    def complete_subtask(self, name: str) -> float:
        """Mark subtask `name` done; returns the progress (share of subtasks done)."""
        for task in self.subtasks:
            if task["name"] == name:
                task["done"] = True
                return self.progress
        raise ValidationFailed(f"no subtask named {name!r}", field="name")

    def add_decision(
        self,
        decision: str,
        rationale: str = "",
        impact: str | None = "medium",
        *,
        created_at: str | None = None,
        seqs: Iterable[int] = (),
    ) -> dict[str, Any]:
        """Append to the decision trail; `impact` is high, medium (default) or low;
        `seqs`: the messages it came from, if known."""
        text = decision.strip()
        if not text:
            raise ValidationFailed("decision must not be empty", field="decision")
        level = (impact or "medium").strip().lower() or "medium"
        if level not in IMPACTS:
            raise ValidationFailed(
                f"impact must be one of {', '.join(IMPACTS)}, not {impact!r}", field="impact"
            )
        entry = {
            "decision": text,
            "rationale": rationale.strip(),
            "impact": level,
            "created_at": created_at or _now(),
            "seqs": list(merge_seqs(seqs)),
        }
        self.decisions.append(entry)
        return entry

    def set_phase(self, phase: str) -> None:
        """The agent's current phase; it weighs the importance of the actions that follow."""
        self.phase = phase.strip() or None

    def configure(self, options: MemoryOptions) -> None:
        """New options (a conversation's `memory_options` changed); compresses if needed."""
        self.options = options
        if len(self.working) > options.compression_limit:
            self._compress()

    def reset(self) -> None:
        """Forget everything but the options."""
        self._clear()

    # -------------------------------------------------------------- reads

    def render(self, max_tokens: int | None = None, encoding: str = DEFAULT_ENCODING) -> str:
        """GOAL / KEY DECISIONS / ERROR PATTERNS / PREVIOUS ACTIONS / RECENT ACTIONS, or ""."""
        return memory_view.render(self, max_tokens, encoding)

    def get_context_for_agent(self, encoding: str = DEFAULT_ENCODING) -> str:
        """The memory's text for the agent, within `max_context_tokens`."""
        return memory_view.render(self, self.options.max_context_tokens, encoding)

    def stats(self) -> dict[str, Any]:
        """`total_actions`, `working_memory_size`, `compression_events`, `decisions_made`,
        `token_utilisation`, `iterations_completed`, `error_alerts`."""
        return memory_view.stats(self)

    def snapshot(self) -> dict[str, Any]:
        """GET /memory (docs/history.md#hierarchical-memory): goal, phase, decisions,
        error_patterns, stats."""
        return memory_view.snapshot(self)

    # -------------------------------------------------------------- state

    def to_dict(self) -> dict[str, Any]:
        return memory_state.dump(self)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any] | None, *, options: MemoryOptions | None = None
    ) -> HierarchicalMemory:
        """Rebuild from `to_dict()` output (None or {} → an empty memory with `options`)."""
        return memory_state.load(cls, data, options)

    def export(self) -> dict[str, Any]:
        """Seed 001's save_state: the whole state as a JSON-ready document."""
        return self.to_dict()

    @classmethod
    def import_state(cls, data: Any) -> HierarchicalMemory:
        """Seed 001's load_state: a document from `export()` (or a checkpoint holding one),
        checked field by field (ValidationFailed naming the first bad one)."""
        return memory_state.validated(cls, data)


def _clean_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationFailed("metadata must be a JSON object", field="metadata")
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"metadata must be JSON: {exc}", field="metadata") from None
    if len(text) > MAX_METADATA_CHARS:
        raise ValidationFailed(
            f"metadata is over {MAX_METADATA_CHARS} characters as JSON", field="metadata"
        )
    clean: dict[str, Any] = json.loads(text)
    return clean
