"""Request and response models of the history routes (docs/api.md#routes).

One ladder per resource: `XBase` (the fields a client writes) → `XCreate` / `XUpdate`
(the request bodies) → the table (`store.history_tables`) → `XPublic` (the base plus
what the service adds), built from a row with `model_validate(row, from_attributes=True)`
or from an inserted row's dict.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from contextq.history.types import MAX_TOOL_CALLS, Kind, NativeFormat, Role

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


# ---------------------------------------------------------------- native turns
# (docs/api.md#native-turns)

NATIVE_MODEL = Field(
    default=None,
    max_length=200,
    description="The model that produced the assistant turns (default: the conversation's).",
)


class _NativeBatch(BaseModel):
    """A batch in a vendor's own shape: each turn is stored verbatim beside the normalised
    message(s) the engine reasons over; a batch the vendor's API would refuse is a 422
    naming the place, and nothing of it is stored."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = NATIVE_MODEL

    _nul = field_validator("model")(_no_nul)


class AnthropicBatch(_NativeBatch):
    format: Literal["anthropic"]
    messages: list[dict[str, Any]] = Field(
        min_length=1,
        description="Messages API `MessageParam`s: an assistant turn is "
        '`{"role": "assistant", "content": response.content}`, tool results are '
        "`tool_result` blocks in user turns.",
    )


class ResponsesBatch(_NativeBatch):
    format: Literal["responses"]
    items: list[dict[str, Any]] = Field(
        min_length=1,
        description="Responses API items: `response.output` items (`message`, `reasoning`, "
        "`function_call`, …), input messages and the `function_call_output`s of the agent.",
    )


class GeminiBatch(_NativeBatch):
    format: Literal["gemini"]
    contents: list[dict[str, Any]] = Field(
        min_length=1,
        description="Gemini `Content`s: role `user` or `model`, `parts` with `text`, "
        "`functionCall`, `functionResponse`, `inlineData`, `thought`, `thoughtSignature`.",
    )


NATIVE_BATCHES: dict[str, type[AnthropicBatch | ResponsesBatch | GeminiBatch]] = {
    "anthropic": AnthropicBatch,
    "responses": ResponsesBatch,
    "gemini": GeminiBatch,
}


class NativePublic(BaseModel):
    """A stored message's slice of its vendor's turn, exactly as posted."""

    format: NativeFormat
    model: str | None
    payload: Any


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
    native: NativePublic | None = Field(
        default=None,
        description="The vendor's own turn this message came from (its slice, verbatim); "
        "null for a message in the default form.",
    )

    @field_validator("file_ids", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @model_validator(mode="before")
    @classmethod
    def _native_from_columns(cls, data: Any) -> Any:
        """A row's `native_format`, `native_model`, `native_payload` as `native`."""
        if isinstance(data, dict):
            if "native" in data or data.get("native_format") is None:
                return data
            return {**data, "native": _native(data.get)}
        if getattr(data, "native_format", None) is None:
            return data
        fields = {name: getattr(data, name, None) for name in cls.model_fields}
        return {**fields, "native": _native(lambda key: getattr(data, key, None))}


def _native(get: Any) -> dict[str, Any]:
    return {
        "format": get("native_format"),
        "model": get("native_model"),
        "payload": get("native_payload"),
    }


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
    # provenance (docs/provenance.md): structured items whose source message is unknown, `(#?)`
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


# the messages a memory fact came from (docs/provenance.md): a summary cites them
SourceSeqs = list[int]
SEQS_FIELD: SourceSeqs = Field(
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
