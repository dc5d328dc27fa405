"""SQLModel tables of the history service: conversations, messages, compactions, memory.

Originals are never altered: filtering and compaction are views over `messages`.
A conversation carries running totals (message count, tokens, last seq, tokens
since the newest compaction) so its size is known without re-counting. Each
message stores its token count (computed once at insert) and `cum_tokens`, the
conversation's running total through that message: the oldest message that still
fits a budget is then found through an index instead of a scan.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Index, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from store.tables import _ts, new_id

ID_LEN = 32


class Conversation(SQLModel, table=True):
    __tablename__ = "conversations"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=ID_LEN)
    owner_id: str = Field(foreign_key="owners.id", index=True, max_length=ID_LEN)
    title: str | None = Field(default=None, max_length=500)
    model: str | None = Field(default=None, max_length=200)
    system_prompt: str | None = Field(default=None, sa_column=Column(Text))
    custom_agent_prompt: str | None = Field(default=None, sa_column=Column(Text))
    replace_system_prompt: bool = False
    context_strategy: str | None = Field(default=None, max_length=32)
    context_options: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    context_threshold: float | None = None
    reminders: list[Any] | None = Field(default=None, sa_column=Column(JSON))
    project_id: str | None = Field(default=None, index=True, max_length=64)
    tools: list[Any] | None = Field(default=None, sa_column=Column(JSON))
    # the hierarchical memory's options (docs/history.md#hierarchical-memory): only those the client
    # set, validated
    memory_options: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    # the context's dynamic sections (docs/history.md#the-ready-to-send-context): the date in this
    # IANA zone (UTC when unset), at `day` (default) or `minute` granularity; the tools that count
    # as search
    search_tools: list[str] | None = Field(default=None, sa_column=Column(JSON))
    timezone: str | None = Field(default=None, max_length=64)
    datetime_granularity: str | None = Field(default=None, max_length=8)
    # running totals, updated in the transaction that inserts messages
    message_count: int = 0
    total_tokens: int = 0
    last_seq: int = 0
    pinned_count: int = 0
    last_compacted_seq: int = 0  # through_seq of the newest compaction (0: none)
    tokens_since_compaction: int = 0  # tokens of the messages after last_compacted_seq
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


class StoredMessage(SQLModel, table=True):
    """A message as appended, never altered but for `pinned` (the engine works on
    `contextq.history.types.Message`, built from these rows)."""

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
        Index("ix_messages_conversation_cum_tokens", "conversation_id", "cum_tokens"),
        Index("ix_messages_conversation_pinned", "conversation_id", "pinned"),
        # covering index: the ids of a seq range without touching the rows (removed ids)
        Index("ix_messages_conversation_seq_id", "conversation_id", "seq", "id"),
        # system messages of a conversation (always kept) without a scan
        Index("ix_messages_conversation_role_seq", "conversation_id", "role", "seq"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=ID_LEN)
    conversation_id: str = Field(
        sa_column=Column(
            String(ID_LEN), ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        )
    )
    seq: int
    role: str = Field(max_length=16)
    content: Any = Field(default=None, sa_column=Column(JSON))  # str, list of parts or None
    tool_calls: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON))
    tool_call_id: str | None = Field(default=None, max_length=200)
    name: str | None = Field(default=None, max_length=200)
    pinned: bool = False
    kind: str | None = Field(default=None, max_length=32)
    importance: float | None = None
    token_count: int = 0
    cum_tokens: int = 0
    file_ids: list[str] | None = Field(default=None, sa_column=Column(JSON))
    created_at: datetime = _ts()
    # a native turn's slice (docs/api.md#native-turns): the vendor's format, the model that
    # produced it and the payload exactly as posted; all NULL for the default form
    native_format: str | None = Field(default=None, max_length=16)
    native_model: str | None = Field(default=None, max_length=200)
    native_payload: Any = Field(default=None, sa_column=Column(JSON(none_as_null=True)))


class Compaction(SQLModel, table=True):
    """A CompactionResult: the summary that stands in for messages with seq ≤ through_seq."""

    __tablename__ = "compactions"
    __table_args__ = (
        Index("ix_compactions_conversation_through", "conversation_id", "through_seq"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=ID_LEN)
    conversation_id: str = Field(
        sa_column=Column(
            String(ID_LEN), ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        )
    )
    method: str = Field(max_length=16)  # summary | truncation (the engine's outcome)
    summary: str = Field(sa_column=Column(Text, nullable=False))
    through_seq: int
    original_message_count: int
    compacted_message_count: int
    original_tokens: int
    compacted_tokens: int
    duration_ms: float
    details: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    # the retention check (docs/history.md#compaction): share of the checked items present before
    # repair (None: a row from before the check), and the items appended
    retention: float | None = None
    repaired: list[str] | None = Field(default=None, sa_column=Column(JSON))
    # provenance (docs/provenance.md): structured items whose source message is unknown, `(#?)`
    # (None: a row from before summaries cited their messages)
    unsourced_items: int | None = None
    job_id: str | None = Field(default=None, max_length=ID_LEN)
    created_at: datetime = _ts()


class Memory(SQLModel, table=True):
    """A conversation's hierarchical memory: the engine's `HierarchicalMemory.to_dict()`."""

    __tablename__ = "memory"

    conversation_id: str = Field(
        sa_column=Column(
            String(ID_LEN),
            ForeignKey("conversations.id", ondelete="CASCADE"),
            primary_key=True,
        )
    )
    state: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    updated_at: datetime = _ts()


__all__ = ["Compaction", "Conversation", "Memory", "StoredMessage"]
