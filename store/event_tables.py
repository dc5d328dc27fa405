"""SQLModel tables of events and webhooks (docs/events.md).

- `events`: what happened, per owner, numbered by a per-owner counter (`event_counters`)
  taken in the recording transaction, so an owner's events commit in id order and a
  reader resuming after id N misses none. Kept EVENT_RETENTION_S (24 h), then swept.
- `webhooks`: an owner's endpoints, the event types each wants and its signing secret
  (the secret is needed to sign, so it is stored as given; it is shown once).
- `webhook_deliveries`: one event for one webhook (its id is the `webhook-id` header,
  the same on every attempt), with its body, status and next attempt time.
- `webhook_attempts`: each HTTP attempt of a delivery: when, how long, the answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, DateTime, ForeignKey, Index, Integer, String, Text
from sqlmodel import Field, SQLModel

from store.tables import _ts, new_id

ID_LEN = 32


class EventCounter(SQLModel, table=True):
    """The newest event id of each owner (ids are never reused, even once swept)."""

    __tablename__ = "event_counters"

    owner_id: str = Field(foreign_key="owners.id", primary_key=True, max_length=ID_LEN)
    last_seq: int = Field(default=0, sa_type=BigInteger)


class Event(SQLModel, table=True):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_created_at", "created_at"),)

    owner_id: str = Field(foreign_key="owners.id", primary_key=True, max_length=ID_LEN)
    seq: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    type: str = Field(max_length=64)
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = _ts()


class Webhook(SQLModel, table=True):
    __tablename__ = "webhooks"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=ID_LEN)
    owner_id: str = Field(foreign_key="owners.id", index=True, max_length=ID_LEN)
    url: str = Field(sa_column=Column(Text, nullable=False))
    events: list[str] = Field(sa_column=Column(JSON, nullable=False))
    secret: str = Field(max_length=128)
    created_at: datetime = _ts()


class DeliveryStatus:
    PENDING = "pending"  # due at next_attempt_at
    SENDING = "sending"  # an attempt is under way (claimed_at)
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # every retry used


class WebhookDelivery(SQLModel, table=True):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_webhook_created", "webhook_id", "created_at", "id"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=ID_LEN)
    webhook_id: str = Field(
        sa_column=Column(
            String(ID_LEN), ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False
        )
    )
    event_seq: int = Field(sa_type=BigInteger)
    event_type: str = Field(max_length=64)
    body: str = Field(sa_column=Column(Text, nullable=False))  # the exact JSON sent
    status: str = Field(default=DeliveryStatus.PENDING, max_length=16)
    attempts: int = 0
    next_attempt_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    claimed_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))
    last_status_code: int | None = None
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = _ts()
    finished_at: datetime | None = Field(default=None, sa_type=DateTime(timezone=True))


class WebhookAttempt(SQLModel, table=True):
    __tablename__ = "webhook_attempts"

    id: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
        ),
    )
    delivery_id: str = Field(
        sa_column=Column(
            String(ID_LEN),
            ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        )
    )
    attempt: int
    started_at: datetime = _ts()
    duration_ms: float
    status_code: int | None = None
    error: str | None = Field(default=None, sa_column=Column(Text))


__all__ = [
    "DeliveryStatus",
    "Event",
    "EventCounter",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
]
