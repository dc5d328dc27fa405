"""Public models of the context answer (docs/history.md#the-ready-to-send-context,
docs/history.md#the-answer) and of the memory snapshot (docs/history.md#hierarchical-memory GET
…/memory), for the OpenAPI document and typed clients.

The routes build these answers as plain dicts (the context's hot path skips validation);
`tests/api/test_response_models.py` checks real answers against these models, with
unknown fields forbidden, so the document cannot drift from what is sent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contextq.history.types import FormatName


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TokenBreakdown(_Strict):
    """Where `token_count` went; the parts sum to it."""

    system: int
    custom_agent: int
    summary: int
    project: int
    files: int
    history: int
    reasoning: int = Field(
        description="reasoning state sent (Anthropic thinking and redacted_thinking blocks, "
        "Responses reasoning items, Gemini thought parts and thought signatures), taken out "
        "of `history`"
    )
    reminders: int


class ReasoningDropped(_Strict):
    """Reasoning units (blocks, items, parts) of the messages sent that were left out."""

    other_vendor: int = Field(
        description="another vendor's reasoning, which the target format cannot carry (it "
        "stays stored: a read in its own format sends it)"
    )
    earlier_turns: int = Field(
        description="reasoning of turns before the current tool loop, which the target "
        "model would strip (it does not keep earlier turns' reasoning)"
    )
    prefix_changed: int = Field(
        description="reasoning left out because the prefix it was written after changed "
        "(models that bind reasoning to its prefix: a cut point or clearing line that "
        "moved, a changed system prompt or tools); a warning names the cause, and a "
        "block once left out is never sent again"
    )


class FileNote(_Strict):
    file_id: str
    reason: str = Field(description="why the file is not in this context, for a person")


class Citation(_Strict):
    citation_id: int = Field(description="stable for the conversation")
    file_id: str | None
    title: str
    source: Literal["file", "project"]
    chunk: dict[str, Any] | None


class ContextAnswer(_Strict):
    """The message list to send now, and where its tokens went."""

    conversation_id: str | None
    model: str
    provider: str
    format: FormatName
    context_limit: int
    budget_tokens: int
    max_output_tokens: int = Field(
        description="the room kept for the answer (the `max_tokens` to send with this context)"
    )
    token_count: int
    token_count_method: Literal["exact", "calibrated"] = Field(
        description="exact: counted with the model's own tokenizer; calibrated: the model's "
        "tokenizer is not published, so each message part is counted in "
        "`token_count_encoding` and multiplied by the factor of its content kind "
        "(`token_count_factors`), rounded up, never below what the provider bills "
        "(docs/token-counting.md)"
    )
    token_count_encoding: Literal["cl100k_base", "o200k_base"] = Field(
        description="the open encoding counted with"
    )
    token_count_family: str | None = Field(
        description="calibrated: the tokenizer family whose factors apply (claude, "
        "claude-2026, gemini, other); null when exact"
    )
    token_count_factors: dict[Literal["prose", "code", "json", "cjk"], float] | None = Field(
        description="calibrated: the factor by content kind, {prose, code, json, cjk} (a "
        "part of several kinds takes the largest); null when exact"
    )
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
    tools: list[dict[str, Any]] = Field(description="definitions in the target format")
    cleared_tool_result_ids: list[str]
    reasoning_dropped: ReasoningDropped
    usage_before: float
    usage_after: float
    filter_duration_ms: float
    error: str | None
    warnings: list[str]
    messages: list[dict[str, Any]] | None = Field(
        default=None,
        description="format=openai|anthropic: ready for openai.chat.completions.create or "
        "anthropic.messages.create",
    )
    system: list[dict[str, Any]] | None = Field(
        default=None, description="format=anthropic: the system text blocks"
    )
    stable_prefix_tokens: int | None = Field(
        default=None, description="format=anthropic: tokens up to the second cache breakpoint"
    )
    instructions: str | None = Field(
        default=None, description="format=responses: the system prompt, for `instructions=`"
    )
    input: list[dict[str, Any]] | None = Field(
        default=None,
        description="format=responses: the Responses API input items, ready for "
        "openai.responses.create(input=…)",
    )
    system_instruction: dict[str, Any] | None = Field(
        default=None,
        description='format=gemini: the system prompt as {"parts": [{"text": …}]}, for '
        "config={'system_instruction': …}",
    )
    contents: list[dict[str, Any]] | None = Field(
        default=None,
        description="format=gemini: the Contents (role user/model, parts), ready for "
        "client.models.generate_content(contents=…)",
    )
    duration_ms: float
    original_message_count: int
    original_tokens: int


class Subtask(_Strict):
    name: str
    done: bool


class Goal(_Strict):
    text: str | None
    subtasks: list[Subtask]
    progress: float = Field(description="share of the subtasks done, 0 to 1")


class Decision(_Strict):
    decision: str
    rationale: str
    impact: Literal["high", "medium", "low"]
    created_at: str


class ErrorPattern(_Strict):
    pattern: str = Field(description="normalised: numbers as N, lowercase")
    count: int
    alert: bool = Field(description="true from the 3rd occurrence")
    last_seen: str


class MemoryStats(_Strict):
    total_actions: int
    working_memory_size: int
    compression_events: int
    decisions_made: int
    token_utilisation: float
    iterations_completed: int
    error_alerts: int


class SnapshotStats(MemoryStats):
    compressed_summary: str


class MemorySnapshot(_Strict):
    goal: Goal
    phase: str | None
    decisions: list[Decision]
    error_patterns: list[ErrorPattern]
    stats: SnapshotStats
