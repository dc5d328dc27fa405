"""Typed results of the SDK, one per response schema of the API.

Each model lists exactly the fields of its schema in the API's OpenAPI document (the
`SCHEMAS` map below names it); the server's `tests/sdk/test_contract.py` compares them field by
field, required or not, so a change on either side fails the suite. Unknown fields sent
by a newer server are kept (`extra="allow"`), never an error.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from contextq_client.base import Model
from contextq_client.models_context import (
    Context,
    ContextFormat,
    MemorySnapshot,
    MemoryStats,
)

__all__ = ["Context", "ContextFormat", "MemorySnapshot", "MemoryStats", "Model"]


class File(Model):
    id: str
    filename: str
    size_bytes: int
    sha256: str
    media_type: str
    file_type: str
    category: str
    status: str
    token_count: int | None
    processed_token_count: int | None
    truncation: dict[str, Any] | None
    metadata: dict[str, Any]
    cache_hit: bool
    error: str | None
    conversation_id: str | None
    project_id: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def done(self) -> bool:
        return self.status in ("ready", "failed")


ItemT = TypeVar("ItemT", bound=BaseModel)


class Page(Model, Generic[ItemT]):
    """One page of a list; `next_cursor` is None on the last."""

    data: list[ItemT]
    next_cursor: str | None


class Conversation(Model):
    id: str
    title: str | None = None
    model: str | None = None
    system_prompt: str | None = None
    custom_agent_prompt: str | None = None
    replace_system_prompt: bool | None = None
    context_strategy: str | None = None
    context_options: dict[str, Any] | None = None
    context_threshold: float | None = None
    reminders: list[Any] | None = None
    project_id: str | None = None
    tools: list[dict[str, Any]] | None = None
    memory_options: dict[str, Any] | None = None
    search_tools: list[str] | None = None
    timezone: str | None = None
    datetime_granularity: str | None = None
    message_count: int
    total_tokens: int
    last_seq: int
    pinned_count: int
    last_compacted_seq: int
    tokens_since_compaction: int
    created_at: datetime
    updated_at: datetime


class NativeTurn(Model):
    """A stored message's slice of its vendor's own turn, exactly as posted: `format` is
    `anthropic`, `responses` or `gemini`, `model` the model that produced it."""

    format: str
    model: str | None
    payload: Any


class Message(Model):
    id: str
    seq: int
    role: str
    content: str | list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    pinned: bool | None = None
    file_ids: list[str] | None = None
    kind: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    importance: float | None
    token_count: int
    created_at: datetime
    native: NativeTurn | None = None  # the vendor's own turn (native batches), else None


class MessageBatchResult(Model):
    """`POST …/messages` with a batch: the stored messages, and the compaction job the
    batch triggered, if any."""

    data: list[Message]
    next_cursor: str | None = None
    compaction_job_id: str | None = None


class JobAccepted(Model):
    job_id: str


class Job(Model):
    id: str
    kind: str
    status: str
    target_id: str | None
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @property
    def done(self) -> bool:
        return self.status in ("succeeded", "failed")


class Compaction(Model):
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
    retention: float | None
    repaired: list[str] | None
    unsourced_items: int | None = None  # structured items marked (#?): no message found
    details: dict[str, Any] | None
    job_id: str | None
    created_at: datetime


class MemoryContext(Model):
    context: str


class WorkspaceEntry(Model):
    path: str
    size_bytes: int
    sha256: str
    file_id: str | None
    status: str | None
    updated_at: datetime


class WorkspacePortion(Model):
    unit: str
    offset: int
    returned: int
    next_offset: int | None
    total: int | None
    sheet: str | None = None


class WorkspaceProcessedView(Model):
    path: str
    file_id: str | None
    status: str | None
    category: str | None
    file_type: str | None
    text: str
    token_count: int | None
    processed_token_count: int | None
    truncation: dict[str, Any] | None
    portion: WorkspacePortion | None = None


class Project(Model):
    id: str
    name: str
    instructions: str | None
    file_count: int
    ready_count: int
    token_count: int
    chunk_count: int
    created_at: datetime
    updated_at: datetime


class ChunkLocation(Model):
    index: int
    page: int | None
    sheet: str | None
    line_start: int | None
    line_end: int | None


class SearchHit(Model):
    chunk_id: int
    file_id: str
    title: str
    text: str
    score: float
    chunk: ChunkLocation


class SearchResults(Model):
    data: list[SearchHit]
    next_cursor: None = None


class Webhook(Model):
    id: str
    url: str
    events: list[str]
    created_at: datetime


class WebhookCreated(Webhook):
    secret: str


class WebhookList(Model):
    data: list[Webhook]
    next_cursor: str | None = None


class DeliveryAttempt(Model):
    attempt: int
    started_at: datetime
    duration_ms: float
    status_code: int | None
    error: str | None


class Delivery(Model):
    id: str
    event_id: int
    event_type: str
    status: str
    attempts: list[DeliveryAttempt]
    next_attempt_at: datetime | None
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None


class OwnerSettings(Model):
    system_prompt: str | None
    default_system_prompt: str
    updated_at: datetime | None


class Event(Model):
    id: int
    type: str
    timestamp: str
    data: dict[str, Any]


class Health(Model):
    """`GET /healthz`: each part's state ("ok" or why not) and the live workers."""

    database: str
    broker: str
    workers: str
    live_workers: int

    @property
    def ok(self) -> bool:
        return self.database == self.broker == self.workers == "ok"


# response model -> the OpenAPI component it mirrors ("api.schemas…:Name" when the API
# describes it with a pydantic model outside the OpenAPI components)
class ToolDefinitionList(Model):
    """The built-in tools' definitions (`GET /v1/tools`)."""

    data: list[dict[str, Any]]


class ToolResult(Model):
    """A built-in tool's result: `content` is the text for the model."""

    content: str


SCHEMAS: dict[type[BaseModel], str] = {
    File: "FilePublic",
    Conversation: "ConversationPublic",
    Message: "MessagePublic",
    NativeTurn: "NativePublic",
    JobAccepted: "JobAccepted",
    Job: "JobPublic",
    Compaction: "CompactionPublic",
    MemoryContext: "MemoryContext",
    WorkspaceEntry: "WorkspaceEntryPublic",
    Project: "ProjectPublic",
    ChunkLocation: "ChunkLocation",
    SearchHit: "SearchHit",
    SearchResults: "SearchResults",
    Webhook: "WebhookPublic",
    WebhookCreated: "WebhookCreated",
    WebhookList: "WebhookList",
    DeliveryAttempt: "AttemptPublic",
    Delivery: "DeliveryPublic",
    OwnerSettings: "SettingsPublic",
    WorkspaceProcessedView: "api.schemas.workspaces:WorkspaceProcessedView",
    WorkspacePortion: "api.schemas.workspaces:WorkspacePortion",
    Event: "api.schemas.events:EventPublic",
    Context: "ContextAnswer",
    MemorySnapshot: "MemorySnapshot",
    MemoryStats: "MemoryStats",
    ToolDefinitionList: "ToolDefinitionList",
    ToolResult: "ToolResult",
}
