"""Request and response models of the history routes (SPEC §2).

The ladder: `ConversationBase` → `ConversationCreate` / `ConversationUpdate` →
`store.history_tables.Conversation` (the table) → `ConversationPublic`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["system", "user", "assistant", "tool"]
Kind = Literal["user_prompt", "reasoning", "tool_call", "decision", "error", "observation"]

MAX_TEXT_FIELD = 200


def _no_nul(value: str | None) -> str | None:
    if value is not None and "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


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

    _nul = field_validator("title", "model", "project_id", "context_strategy")(_no_nul)


class ConversationCreate(ConversationBase):
    pass


class ConversationUpdate(ConversationBase):
    replace_system_prompt: bool | None = None  # type: ignore[assignment]


class ConversationPublic(BaseModel):
    id: str
    title: str | None
    model: str | None
    system_prompt: str | None
    custom_agent_prompt: str | None
    replace_system_prompt: bool
    context_strategy: str | None
    context_options: dict[str, Any] | None
    context_threshold: float | None
    reminders: list[Any] | None
    project_id: str | None
    tools: list[Any] | None
    message_count: int
    total_tokens: int
    last_seq: int
    pinned_count: int
    last_compacted_seq: int
    tokens_since_compaction: int
    created_at: datetime
    updated_at: datetime


class ToolFunction(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_TEXT_FIELD)
    arguments: str | dict[str, Any] = "{}"

    _nul = field_validator("name")(_no_nul)


class ToolCall(BaseModel):
    id: str = Field(min_length=1, max_length=MAX_TEXT_FIELD)
    type: Literal["function"] = "function"
    function: ToolFunction

    _nul = field_validator("id")(_no_nul)


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = Field(default=None, max_length=128)
    tool_call_id: str | None = Field(default=None, max_length=MAX_TEXT_FIELD)
    name: str | None = Field(default=None, max_length=MAX_TEXT_FIELD)
    pinned: bool = False
    file_ids: list[str] = Field(default_factory=list, max_length=100)
    kind: Kind | None = None

    _nul = field_validator("tool_call_id", "name")(_no_nul)


class MessageBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    messages: list[MessageIn] = Field(min_length=1)


class MessagePublic(BaseModel):
    id: str
    seq: int
    role: str
    content: Any
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    name: str | None
    pinned: bool
    kind: str | None
    importance: float | None
    token_count: int
    file_ids: list[str]
    created_at: datetime


class MessagePatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pinned: bool


class CompactionPublic(BaseModel):
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
    details: dict[str, Any] | None
    job_id: str | None
    created_at: datetime


class JobPublic(BaseModel):
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


class GoalIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=10_000)
    subtasks: list[str] = Field(default_factory=list, max_length=200)


class PhaseIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phase: str = Field(min_length=1, max_length=200)


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: str = Field(min_length=1, max_length=10_000)
    rationale: str = Field(default="", max_length=10_000)
    impact: str = Field(default="", max_length=10_000)
