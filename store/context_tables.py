"""Tables of the ready-to-send context (docs/history.md#the-ready-to-send-context): the owner's
saved system prompt, a conversation's citation ids, and the cut points of its filtered contexts.

- `owner_settings`: one row per owner that saved settings (`PUT /v1/settings`).
- `conversation_citations`: a document's citation id in a conversation, stable once
  given (unique per conversation and source key, and per conversation and id).
- `context_cut_points`: the state a conversation's contexts carry from answer to answer,
  per conversation and model: where a filtered context's history starts (`seq`, the cut
  point, docs/context.md#the-cut-point-and-a-prefix-that-stays-put: kept until the budget is
  exceeded again) and the clearing line (`clear_seq`: tool results below it stand as stubs,
  docs/context.md#clearing-old-tool-results-with-hysteresis; it moves only when the context no
  longer fits). Either may be unset. `version` moves on with every write of that state, which is
  made only if it is still the version the read started from (`context_queries.put_carried`), so
  concurrent reads answer one state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, ForeignKey, Integer, String, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from store.history_tables import ID_LEN
from store.tables import _ts

SOURCE_KEY_LEN = 96
MODEL_KEY_LEN = 200


class OwnerSettings(SQLModel, table=True):
    __tablename__ = "owner_settings"

    owner_id: str = Field(
        sa_column=Column(String(32), ForeignKey("owners.id", ondelete="CASCADE"), primary_key=True)
    )
    system_prompt: str | None = Field(default=None, sa_column=Column(Text))
    updated_at: datetime = _ts()


class ConversationCitation(SQLModel, table=True):
    __tablename__ = "conversation_citations"
    __table_args__ = (
        UniqueConstraint("conversation_id", "citation_id", name="uq_citations_conversation_id"),
    )

    conversation_id: str = Field(
        sa_column=Column(
            String(ID_LEN),
            ForeignKey("conversations.id", ondelete="CASCADE"),
            primary_key=True,
        )
    )
    source_key: str = Field(primary_key=True, max_length=SOURCE_KEY_LEN)  # file:<id>, chunk:<id>
    citation_id: int
    created_at: datetime = _ts()


class ContextCutPoint(SQLModel, table=True):
    __tablename__ = "context_cut_points"

    conversation_id: str = Field(
        sa_column=Column(
            String(ID_LEN),
            ForeignKey("conversations.id", ondelete="CASCADE"),
            primary_key=True,
        )
    )
    model: str = Field(primary_key=True, max_length=MODEL_KEY_LEN)
    seq: int | None = None  # the cut point
    clear_seq: int | None = None  # the clearing line
    # bound reasoning (contextq.assembly.binding): the watermark (reasoning of rows at or
    # below it is never sent again), and the newest answers' fingerprints, each kept
    # row's bound fingerprint and the turn's pins, as JSON
    reasoning_seq: int | None = None
    binding: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    version: int = Field(  # +1 per write of the carried state (a compare-and-set)
        default=0, sa_column=Column(Integer, nullable=False, server_default=text("0"))
    )
    updated_at: datetime = _ts()


__all__ = ["ContextCutPoint", "ConversationCitation", "OwnerSettings"]
