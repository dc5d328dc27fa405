"""Request and response models of the history routes (SPEC §2).

One ladder per resource: `XBase` (the fields a client writes) → `XCreate` / `XUpdate`
(the request bodies) → the table (`store.history_tables`) → `XPublic` (the base plus
what the service adds), built from a row with `model_validate(row, from_attributes=True)`
or from an inserted row's dict.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from contextq.history.types import MAX_TOOL_CALLS, Kind, Role

MAX_TEXT_FIELD = 200
Impact = Literal["high", "medium", "low"]


def _no_nul(value: str | None) -> str | None:
    if value is not None and "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


class _Public(BaseModel):
    """Responses are built from our own rows: extra attributes are ignored."""

    model_config = ConfigDict(extra="ignore", from_attributes=True)


# ---------------------------------------------------------------- conversations


class ConversationBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=500)
    model: str | None = Field(default=None, max_length=200)
    system_prompt: str | None = Field(default=None, max_length=200_000)
    custom_agent_prompt: str | None = Field(default=None, max_length=200_000)
    replace_system_prompt: bool = False
    context_strategy: str | None = Field(default=None, max_length=32)
    context_options: dict[str, Any] | None = None
    context_threshold: float | None = Field(default=None, gt=0, le=1)
    reminders: list[Any] | None = Field(default=None, max_length=100)
    project_id: str | None = Field(default=None, max_length=64)
    tools: list[dict[str, Any]] | None = Field(default=None, max_length=500)
    # the hierarchical memory's options (seed 001): max_working_memory, max_context_tokens,
    # compression_threshold (a ratio); validated by the service (422 naming the option)
    memory_options: dict[str, Any] | None = None
    search_tools: list[str] | None = Field(default=None, max_length=100)
    timezone: str | None = Field(default=None, max_length=64)
    datetime_granularity: Literal["day", "minute"] | None = None

    _nul = field_validator("title", "model", "project_id", "context_strategy", "timezone")(_no_nul)


class ConversationCreate(ConversationBase):
    pass


class ConversationUpdate(ConversationBase):
    replace_system_prompt: bool | None = None  # type: ignore[assignment]


class ConversationPublic(ConversationBase, _Public):
    model_config = ConfigDict(extra="ignore", from_attributes=True)

    id: str
    message_count: int
    total_tokens: int
    last_seq: int
    pinned_count: int
    last_compacted_seq: int
    tokens_since_compaction: int
    created_at: datetime
    updated_at: datetime


class ConversationList(BaseModel):
    data: list[ConversationPublic]
    next_cursor: str | None


# ---------------------------------------------------------------- messages


class ToolFunction(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_TEXT_FIELD)
    arguments: str | dict[str, Any] = "{}"

    _nul = field_validator("name")(_no_nul)


class ToolCall(BaseModel):
    id: str = Field(min_length=1, max_length=MAX_TEXT_FIELD)
    type: Literal["function"] = "function"
    function: ToolFunction

    _nul = field_validator("id")(_no_nul)


class MessageBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    tool_call_id: str | None = Field(default=None, max_length=MAX_TEXT_FIELD)
    name: str | None = Field(default=None, max_length=MAX_TEXT_FIELD)
    pinned: bool = False
    file_ids: list[str] = Field(default_factory=list, max_length=100)
    kind: Kind | None = None

    _nul = field_validator("tool_call_id", "name")(_no_nul)


class MessageCreate(MessageBase):
    tool_calls: list[ToolCall] | None = Field(default=None, max_length=MAX_TOOL_CALLS)


class MessageBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    messages: list[MessageCreate] = Field(min_length=1)


class MessagePin(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pinned: bool


class MessagePublic(MessageBase, _Public):
    model_config = ConfigDict(extra="ignore", from_attributes=True)

    id: str
    seq: int
    tool_calls: list[dict[str, Any]] | None = None  # as stored
    importance: float | None
    token_count: int
    created_at: datetime

    @field_validator("file_ids", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value


class MessageList(BaseModel):
    data: list[MessagePublic]
    next_cursor: str | None


# ---------------------------------------------------------------- compactions and jobs


class CompactionPublic(_Public):
    id: str
    conversation_id: str
    method: str
    summary: str
    through_seq: int
    original_message_count: int
    compacted_message_count: int
    original_tokens: int
    compacted_tokens: int
    duration_ms: float
    retention: float | None  # share of the checked items present before repair
    repaired: list[str] | None  # the items appended ("goal: …", "decision: …")
    # provenance (SPEC §5): structured items whose source message is unknown, `(#?)`
    # (None: a compaction from before summaries cited their messages)
    unsourced_items: int | None = None
    details: dict[str, Any] | None
    job_id: str | None
    created_at: datetime


class CompactionList(BaseModel):
    data: list[CompactionPublic]
    next_cursor: str | None


class JobPublic(_Public):
    id: str
    kind: str
    status: str
    target_id: str | None
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class JobAccepted(BaseModel):
    job_id: str


# ---------------------------------------------------------------- memory


# the messages a memory fact came from (SPEC §5 provenance): a summary cites them
SourceSeqs = list[int]
SEQS_FIELD = Field(
    default_factory=list,
    max_length=8,
    description="The seqs of the messages this came from, cited by summaries as (#12).",
)


class GoalIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=10_000)
    subtasks: list[str] = Field(default_factory=list, max_length=200)
    seqs: SourceSeqs = SEQS_FIELD


class PhaseIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phase: str = Field(min_length=1, max_length=200)


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: str = Field(min_length=1, max_length=10_000)
    rationale: str = Field(default="", max_length=10_000)
    impact: Impact = "medium"
    seqs: SourceSeqs = SEQS_FIELD

    @field_validator("impact", mode="before")
    @classmethod
    def _impact_any_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class ActionIn(BaseModel):
    """Seed 001's `add_action(action_type, content, success, metadata)`."""

    model_config = ConfigDict(extra="forbid")

    action_type: Kind
    content: str = Field(default="", max_length=100_000)
    success: bool | None = True
    metadata: dict[str, Any] | None = None


class ErrorIn(BaseModel):
    """Seed 001's `track_error_pattern(error)`."""

    model_config = ConfigDict(extra="forbid")

    error: str = Field(min_length=1, max_length=100_000)
    seqs: SourceSeqs = SEQS_FIELD


class MemoryContext(BaseModel):
    """Seed 001's `get_context_for_agent()`."""

    context: str
