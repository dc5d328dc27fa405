"""Typed results of `GET …/context` (the ready-to-send context) and of the memory reads
(`GET …/memory`, `GET …/memory/stats`). Each top-level model mirrors its API schema field
for field (`tests/sdk/test_contract.py` compares them)."""

from __future__ import annotations

from typing import Any, Literal

from contextq_client.base import Model

# the context's `format=` (the server's `contextq.history.types.FormatName`, which this
# distribution cannot import: `tests/sdk/test_contract.py` checks they are equal)
ContextFormat = Literal["openai", "anthropic", "responses", "gemini"]
ToolFormat = Literal[ContextFormat, "mcp"]  # `GET /v1/tools`: a context format, or MCP's


class TokenBreakdown(Model):
    """Where `token_count` went; the parts sum to it."""

    system: int
    custom_agent: int
    summary: int
    project: int
    files: int
    history: int
    reminders: int
    reasoning: int = 0  # same-vendor reasoning sent (thinking, reasoning items, thoughts)


class FileNote(Model):
    file_id: str
    reason: str


class Citation(Model):
    citation_id: int
    file_id: str | None
    title: str
    source: str  # "file" or "project"
    chunk: dict[str, Any] | None  # project chunks: {"index", "page"}


class Context(Model):
    """The message list to send now (`messages`, and `system` in the Anthropic format;
    `instructions` and `input` in the Responses format; `system_instruction` and
    `contents` in Gemini's), the tools, and where the tokens went (README, "The
    ready-to-send context")."""

    conversation_id: str | None
    model: str
    provider: str
    format: str
    context_limit: int
    budget_tokens: int
    max_output_tokens: int
    token_count: int
    # how it counted: "exact" (the model's own tokenizer) or "calibrated" (the open
    # encoding times a factor by content kind: docs/token-counting.md)
    token_count_method: str
    token_count_encoding: str
    token_count_family: str | None  # calibrated: claude, claude-2026, gemini, other
    token_count_factors: dict[str, float] | None  # calibrated: {prose, code, json, cjk}
    token_breakdown: TokenBreakdown
    strategy: str
    filtered: bool
    compaction_id: str | None
    kept_message_count: int
    removed_message_ids: list[str]
    pending_file_ids: list[str]
    failed_file_ids: list[str]
    file_notes: list[FileNote]
    citations: list[Citation]
    tools: list[dict[str, Any]]
    cleared_tool_result_ids: list[str]
    usage_before: float
    usage_after: float
    filter_duration_ms: float
    error: str | None
    warnings: list[str]
    # the turns, in the answer's format: `messages` (openai, anthropic: with `system`),
    # `input` (responses: with `instructions`), `contents` (gemini: with
    # `system_instruction`, `{"parts": [{"text": …}]}`)
    messages: list[dict[str, Any]] | None = None
    system: list[dict[str, Any]] | None = None
    stable_prefix_tokens: int | None = None
    instructions: str | None = None
    input: list[dict[str, Any]] | None = None
    system_instruction: dict[str, Any] | None = None
    contents: list[dict[str, Any]] | None = None
    # reasoning left out of this context, by why: {"other_vendor", "earlier_turns",
    # "prefix_changed"} (docs/context.md#bound-reasoning)
    reasoning_dropped: dict[str, int]
    duration_ms: float
    original_message_count: int
    original_tokens: int

    @property
    def turns(self) -> list[dict[str, Any]]:
        """The answer's turns in its format: `messages`, `input` or `contents`."""
        return self.messages or self.input or self.contents or []


class Subtask(Model):
    name: str
    done: bool


class Goal(Model):
    text: str | None
    subtasks: list[Subtask]
    progress: float  # share of the subtasks done, 0 to 1


class Decision(Model):
    decision: str
    rationale: str
    impact: str  # high, medium or low
    created_at: str


class ErrorPattern(Model):
    pattern: str
    count: int
    alert: bool  # from the 3rd occurrence
    last_seen: str


class MemoryStats(Model):
    total_actions: int
    working_memory_size: int
    compression_events: int
    decisions_made: int
    token_utilisation: float
    iterations_completed: int
    error_alerts: int


class SnapshotStats(MemoryStats):
    compressed_summary: str


class MemorySnapshot(Model):
    """`GET …/memory`: goal and subtasks, phase, decisions, error patterns, statistics."""

    goal: Goal
    phase: str | None
    decisions: list[Decision]
    error_patterns: list[ErrorPattern]
    stats: SnapshotStats
