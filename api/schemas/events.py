"""Request and response models of the events and webhooks routes (docs/events.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from api.schemas.files import UtcDatetime

EventType = Literal[
    "file.ready",
    "file.failed",
    "compaction.succeeded",
    "compaction.failed",
    "context.filtered",
    "context.strategy_unknown",
]
DeliveryStatusName = Literal["pending", "sending", "succeeded", "failed"]


class _Public(BaseModel):
    model_config = ConfigDict(extra="ignore", from_attributes=True)


class EventPublic(BaseModel):
    """The `data:` of one `GET /v1/events` message (`id:` is `id`, `event:` is `type`);
    also the body of a webhook delivery (without `id`)."""

    id: int
    type: EventType
    timestamp: str
    data: dict[str, Any]


class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=2048, description="http(s) URL of a public host")
    events: list[EventType] = Field(min_length=1, max_length=len(EventType.__args__))  # type: ignore[attr-defined]
    secret: str | None = Field(
        default=None,
        max_length=128,
        description="`whsec_` + base64 of 24-64 bytes; generated when left out",
    )


class WebhookPublic(_Public):
    id: str
    url: str
    events: list[EventType]
    created_at: UtcDatetime


class WebhookCreated(WebhookPublic):
    secret: str = Field(description="shown once: verify the `webhook-signature` header with it")


class WebhookList(BaseModel):
    data: list[WebhookPublic]
    next_cursor: str | None = None


class AttemptPublic(_Public):
    attempt: int
    started_at: UtcDatetime
    duration_ms: float
    status_code: int | None
    error: str | None


class DeliveryPublic(_Public):
    id: str = Field(description="the `webhook-id` header, the same on every attempt")
    event_id: int
    event_type: EventType
    status: DeliveryStatusName
    attempts: list[AttemptPublic]
    next_attempt_at: UtcDatetime | None
    last_status_code: int | None
    last_error: str | None
    created_at: UtcDatetime
    finished_at: UtcDatetime | None


class DeliveryList(BaseModel):
    data: list[DeliveryPublic]
    next_cursor: str | None
