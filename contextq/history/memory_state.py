"""A hierarchical memory as JSON: the stored state, seed 001's save_state / load_state
(`export` / `import_state`), and the private-data checkpoint of
docs/workspaces.md#private-data-conversation-and-memory-checkpoints.

- `MemoryState`: the fields themselves (`HierarchicalMemory` adds the behaviour over
  them, so this module and `memory_view` need nothing of `memory`);
- `dump(memory)` → the JSON-ready dict (version 2: options, goal, subtasks, phase,
  decisions, error patterns, working memory, compressed counters, counters; the seqs the
  goal, subtasks, decisions and patterns came from, optional in a document);
- `load(kind, data)` rebuilds one (a `kind`: `HierarchicalMemory`); version 1 rows
  (before the options were stored) load with the default options;
- `validated(kind, data)` checks a document a user sends (POST …/memory/import) and raises
  ValidationFailed naming the first bad field; a checkpoint document
  (`{"conversation": …, "memory": …}`) is accepted too;
- `memory_checkpoint(conversation, memory)` gives `{"conversation": {...}, "memory": {...}}`.

Round trip: `load(dump(m))` dumps to exactly `dump(m)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from datetime import date, datetime
from functools import cache
from typing import Any, Literal, NotRequired, TypeVar

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from typing_extensions import TypedDict  # pydantic needs this one on Python 3.11

from contextq.errors import ValidationFailed
from contextq.history.memory_actions import Action, CompressedActions
from contextq.history.memory_options import MemoryOptions
from contextq.history.types import Kind

STATE_VERSION = 2
Impact = Literal["high", "medium", "low"]


class MemoryState:
    """The fields of a hierarchical memory: what `dump` writes and `load` reads back."""

    def __init__(self, *, options: MemoryOptions | None = None) -> None:
        self.options = options or MemoryOptions()
        self._clear()

    def _clear(self) -> None:
        self.goal: str | None = None
        self.goal_seqs: list[int] = []
        self.subtasks: list[dict[str, Any]] = []
        self.phase: str | None = None
        self.decisions: list[dict[str, Any]] = []
        self.error_patterns: dict[str, dict[str, Any]] = {}
        self.working: list[Action] = []
        self.compressed = CompressedActions()
        self.total_actions = 0
        self.compressions = 0
        self.iterations = 0
        self.next_id = 1

    @property
    def progress(self) -> float:
        if not self.subtasks:
            return 0.0
        done = sum(1 for t in self.subtasks if t["done"])
        return round(done / len(self.subtasks), 4)


S = TypeVar("S", bound=MemoryState)


class _ActionDoc(TypedDict):
    id: int
    kind: Kind
    content: str
    importance: float
    tool: str | None
    success: bool | None
    files: list[str]
    pattern: str | None
    message_id: str | None
    created_at: str
    call_ids: list[str]
    metadata: NotRequired[dict[str, Any]]


class _CompressedDoc(TypedDict):
    actions: int
    tools: int
    tools_ok: int
    files_read: list[str]
    files_written: list[str]
    files_read_count: int
    files_written_count: int
    by_kind: dict[str, int]


class _SubtaskDoc(TypedDict):
    name: str
    done: bool
    seqs: NotRequired[list[int]]


class _DecisionDoc(TypedDict):
    decision: str
    rationale: str
    impact: Impact
    created_at: str
    seqs: NotRequired[list[int]]


class _PatternDoc(TypedDict):
    count: int
    alert: bool
    last_seen: str
    seqs: NotRequired[list[int]]


class _OptionsDoc(TypedDict):
    max_working_memory: int
    max_context_tokens: int
    compression_threshold: float
    recent_to_keep: NotRequired[int]


class _MemoryDoc(TypedDict):
    version: Literal[2]
    options: _OptionsDoc
    goal: str | None
    goal_seqs: NotRequired[list[int]]
    subtasks: list[_SubtaskDoc]
    phase: str | None
    decisions: list[_DecisionDoc]
    error_patterns: dict[str, _PatternDoc]
    working: list[_ActionDoc]
    compressed: _CompressedDoc
    total_actions: int
    compressions: int
    iterations: int
    next_id: int


@cache
def _document() -> TypeAdapter[_MemoryDoc]:
    return TypeAdapter(_MemoryDoc)


def dump(memory: MemoryState) -> dict[str, Any]:
    return {
        "version": STATE_VERSION,
        "options": memory.options.to_dict(),
        "goal": memory.goal,
        "goal_seqs": list(memory.goal_seqs),
        "subtasks": [dict(t) for t in memory.subtasks],
        "phase": memory.phase,
        "decisions": [dict(d) for d in memory.decisions],
        "error_patterns": {p: dict(e) for p, e in memory.error_patterns.items()},
        "working": [asdict(a) for a in memory.working],
        "compressed": asdict(memory.compressed),
        "total_actions": memory.total_actions,
        "compressions": memory.compressions,
        "iterations": memory.iterations,
        "next_id": memory.next_id,
    }


def load(kind: type[S], data: Mapping[str, Any] | None, options: MemoryOptions | None = None) -> S:
    """A `kind` rebuilt from `dump()` output; None or {} → an empty memory with `options`.

    Stored options win over `options` (they were validated when written); a version 1
    row has none and gets `options` (else the defaults).
    """
    data = data or {}
    stored = data.get("options")
    if isinstance(stored, Mapping):
        options = MemoryOptions.parse(stored, base=MemoryOptions(), field="memory.options")
    memory = kind(options=options)
    memory.goal = data.get("goal")
    memory.goal_seqs = [int(s) for s in data.get("goal_seqs", [])]
    memory.subtasks = [dict(t) for t in data.get("subtasks", [])]
    memory.phase = data.get("phase")
    memory.decisions = [_decision(d) for d in data.get("decisions", [])]
    memory.error_patterns = {p: dict(e) for p, e in data.get("error_patterns", {}).items()}
    memory.working = [Action(**a) for a in data.get("working", [])]
    memory.compressed = CompressedActions(**data.get("compressed", {}))
    memory.total_actions = int(data.get("total_actions", 0))
    memory.compressions = int(data.get("compressions", 0))
    memory.iterations = int(data.get("iterations", 0))
    memory.next_id = int(data.get("next_id", memory.total_actions + 1))
    return memory


def _decision(entry: Mapping[str, Any]) -> dict[str, Any]:
    decision = dict(entry)
    if decision.get("impact") not in ("high", "medium", "low"):  # version 1: free text
        decision["impact"] = "medium"
    return decision


def validated(kind: type[S], data: Any) -> S:
    """A memory document from a user (an export, or a checkpoint holding one)."""
    if isinstance(data, Mapping) and "memory" in data and "version" not in data:
        data = data["memory"]
    try:
        _document().validate_python(data, strict=False)
    except PydanticValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        field = f"memory.{where}" if where else "memory"
        raise ValidationFailed(f"{field}: {error['msg']}", field=field) from None
    MemoryOptions.parse(data["options"], base=MemoryOptions(), field="memory.options")
    names = [t["name"] for t in data["subtasks"]]
    if len(set(names)) != len(names):
        raise ValidationFailed("subtask names must be unique", field="memory.subtasks")
    ids = [a["id"] for a in data["working"]]
    if ids and max(ids) >= data["next_id"]:
        raise ValidationFailed("next_id must be above every action id", field="memory.next_id")
    return load(kind, data)


def memory_checkpoint(conversation: Mapping[str, Any], memory: MemoryState) -> dict[str, Any]:
    """The private-data document
    (docs/workspaces.md#private-data-conversation-and-memory-checkpoints): `{"conversation": {id,
    title, model, created_at, …}, "memory": <export>}`. Datetimes become ISO strings; no I/O
    here."""
    if not conversation.get("id"):
        raise ValidationFailed("a checkpoint needs the conversation's id", field="conversation.id")
    return {"conversation": _jsonable(dict(conversation)), "memory": dump(memory)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
