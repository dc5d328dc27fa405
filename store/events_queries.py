"""Queries over events and webhooks (keyword-only; a Session or a Core Connection).

Persistence only: which events a webhook wants, when a delivery is due and what an
attempt means are decided in `service.events` / `service.webhooks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Connection,
    CursorResult,
    Executable,
    Table,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session
from sqlmodel import col

from store.event_tables import (
    DeliveryStatus,
    Event,
    EventCounter,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
)
from store.history_tables import Conversation
from store.tables import File

Conn = Session | Connection

EVENTS: Table = Event.__table__  # type: ignore[attr-defined]
COUNTERS: Table = EventCounter.__table__  # type: ignore[attr-defined]
WEBHOOKS: Table = Webhook.__table__  # type: ignore[attr-defined]
DELIVERIES: Table = WebhookDelivery.__table__  # type: ignore[attr-defined]
ATTEMPTS: Table = WebhookAttempt.__table__  # type: ignore[attr-defined]
DELETE_BATCH = 5000


# --- events ---------------------------------------------------------------------------
def allocate_seqs(conn: Conn, *, owner_id: str, count: int) -> int:
    """Take `count` new event ids of `owner_id`; returns the last one. The counter row
    stays locked until the transaction ends, so an owner's events commit in id order."""
    upsert: Any  # the dialect's own INSERT … ON CONFLICT (the two share its API)
    if _dialect(conn) == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as upsert  # noqa: PLC0415 - the one in use
    else:
        from sqlalchemy.dialects.sqlite import insert as upsert  # noqa: PLC0415
    stmt = upsert(COUNTERS).values(owner_id=owner_id, last_seq=count)
    stmt = stmt.on_conflict_do_update(
        index_elements=[COUNTERS.c.owner_id], set_={"last_seq": COUNTERS.c.last_seq + count}
    ).returning(COUNTERS.c.last_seq)
    return int(conn.execute(stmt).scalar_one())


def _dialect(conn: Conn) -> str:
    bind = conn.get_bind() if isinstance(conn, Session) else conn
    return str(bind.dialect.name)


def insert_events(conn: Conn, *, rows: Sequence[dict[str, Any]]) -> None:
    """`rows`: owner_id, seq, type, data, created_at."""
    if rows:
        conn.execute(insert(EVENTS), list(rows))


@dataclass(frozen=True)
class StoredEvent:
    seq: int
    type: str
    data: dict[str, Any]
    created_at: datetime


def events_after(
    conn: Conn, *, owner_id: str, after_seq: int, since: datetime, limit: int
) -> list[StoredEvent]:
    """The owner's events with id > `after_seq`, created at or after `since`, in id order."""
    stmt = (
        select(EVENTS.c.seq, EVENTS.c.type, EVENTS.c.data, EVENTS.c.created_at)
        .where(EVENTS.c.owner_id == owner_id, EVENTS.c.seq > after_seq)
        .where(EVENTS.c.created_at >= since)
        .order_by(EVENTS.c.seq)
        .limit(limit)
    )
    return [StoredEvent(*row) for row in conn.execute(stmt).all()]


def latest_seq(conn: Conn, *, owner_id: str) -> int:
    stmt = select(COUNTERS.c.last_seq).where(COUNTERS.c.owner_id == owner_id)
    return int(conn.execute(stmt).scalar() or 0)


def delete_events_before(conn: Conn, *, before: datetime) -> int:
    """Delete the oldest events created before `before`, about DELETE_BATCH at a time
    (fewer held locks); returns how many."""
    boundary = conn.execute(
        select(EVENTS.c.created_at)
        .where(EVENTS.c.created_at < before)
        .order_by(EVENTS.c.created_at)
        .offset(DELETE_BATCH - 1)
        .limit(1)
    ).scalar()
    cut = EVENTS.c.created_at < before if boundary is None else EVENTS.c.created_at <= boundary
    return _rowcount(conn, delete(EVENTS).where(cut))


# --- facts an event reports ------------------------------------------------------------
def file_facts(conn: Conn, *, file_id: str) -> dict[str, Any] | None:
    """What a file.ready / file.failed event says about a file (owner_id included)."""
    table: Table = File.__table__  # type: ignore[attr-defined]
    columns = (
        "owner_id",
        "id",
        "filename",
        "status",
        "file_type",
        "category",
        "token_count",
        "processed_token_count",
        "error",
        "conversation_id",
        "project_id",
    )
    row = conn.execute(select(*(table.c[c] for c in columns)).where(table.c.id == file_id)).first()
    return dict(row._mapping) if row is not None else None


def conversation_owner(conn: Conn, *, conversation_id: str) -> str | None:
    table: Table = Conversation.__table__  # type: ignore[attr-defined]
    stmt = select(table.c.owner_id).where(table.c.id == conversation_id)
    value = conn.execute(stmt).scalar()
    return str(value) if value is not None else None


# --- webhooks ----------------------------------------------------------------------------
def subscribed_webhooks(
    conn: Conn, *, owner_ids: Sequence[str]
) -> list[tuple[str, str, list[str]]]:
    """(webhook id, owner id, event types) of the owners' webhooks."""
    if not owner_ids:
        return []
    stmt = select(WEBHOOKS.c.id, WEBHOOKS.c.owner_id, WEBHOOKS.c.events).where(
        WEBHOOKS.c.owner_id.in_(sorted(set(owner_ids)))
    )
    return [(r.id, r.owner_id, list(r.events or ())) for r in conn.execute(stmt).all()]


def count_webhooks(session: Session, *, owner_id: str) -> int:
    stmt = select(func.count()).select_from(WEBHOOKS).where(WEBHOOKS.c.owner_id == owner_id)
    return int(session.execute(stmt).scalar_one())


def list_webhooks(session: Session, *, owner_id: str) -> list[Webhook]:
    stmt = (
        select(Webhook)
        .where(col(Webhook.owner_id) == owner_id)
        .order_by(col(Webhook.created_at), col(Webhook.id))
    )
    return list(session.execute(stmt).scalars().all())


def get_webhook(session: Session, *, owner_id: str, webhook_id: str) -> Webhook | None:
    row = session.get(Webhook, webhook_id)
    return row if row is not None and row.owner_id == owner_id else None


def delete_webhook(session: Session, *, webhook_id: str) -> None:
    session.execute(delete(WEBHOOKS).where(WEBHOOKS.c.id == webhook_id))


# --- deliveries ----------------------------------------------------------------------------
def insert_deliveries(conn: Conn, *, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        conn.execute(insert(DELIVERIES), list(rows))


def claim_delivery(conn: Conn, *, delivery_id: str, now: datetime, due_by: datetime) -> bool:
    """`pending` → `sending` if due by `due_by`; False when another took it, it is not
    due yet, finished, or gone."""
    stmt = (
        update(DELIVERIES)
        .where(
            DELIVERIES.c.id == delivery_id,
            DELIVERIES.c.status == DeliveryStatus.PENDING,
            or_(DELIVERIES.c.next_attempt_at.is_(None), DELIVERIES.c.next_attempt_at <= due_by),
        )
        .values(status=DeliveryStatus.SENDING, claimed_at=now)
    )
    return bool(_rowcount(conn, stmt))


@dataclass(frozen=True)
class DeliveryJob:
    id: str
    attempts: int
    body: str
    url: str
    secret: str


def delivery_job(conn: Conn, *, delivery_id: str) -> DeliveryJob | None:
    stmt = (
        select(
            DELIVERIES.c.id,
            DELIVERIES.c.attempts,
            DELIVERIES.c.body,
            WEBHOOKS.c.url,
            WEBHOOKS.c.secret,
        )
        .join(WEBHOOKS, WEBHOOKS.c.id == DELIVERIES.c.webhook_id)
        .where(DELIVERIES.c.id == delivery_id)
    )
    row = conn.execute(stmt).first()
    return DeliveryJob(*row) if row is not None else None


def finish_attempt(
    conn: Conn,
    *,
    delivery_id: str,
    attempt: int,
    started_at: datetime,
    duration_ms: float,
    status_code: int | None,
    error: str | None,
    status: str,
    next_attempt_at: datetime | None,
    now: datetime,
) -> bool:
    """Record attempt `attempt` and move the claimed delivery on; False if it is gone."""
    moved = _rowcount(
        conn,
        update(DELIVERIES)
        .where(DELIVERIES.c.id == delivery_id, DELIVERIES.c.status == DeliveryStatus.SENDING)
        .values(
            status=status,
            attempts=attempt,
            next_attempt_at=next_attempt_at,
            claimed_at=None,
            last_status_code=status_code,
            last_error=error,
            finished_at=now
            if status in (DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED)
            else None,
        ),
    )
    if not moved:
        return False
    conn.execute(
        insert(ATTEMPTS).values(
            delivery_id=delivery_id,
            attempt=attempt,
            started_at=started_at,
            duration_ms=duration_ms,
            status_code=status_code,
            error=error,
        )
    )
    return True


def due_deliveries(conn: Conn, *, now: datetime, limit: int) -> list[str]:
    stmt = (
        select(DELIVERIES.c.id)
        .where(DELIVERIES.c.status == DeliveryStatus.PENDING, DELIVERIES.c.next_attempt_at <= now)
        .order_by(DELIVERIES.c.next_attempt_at)
        .limit(limit)
    )
    return [str(r) for r in conn.execute(stmt).scalars().all()]


def release_stale_sending(conn: Conn, *, claimed_before: datetime, now: datetime) -> int:
    """`sending` rows whose worker died mid-attempt go back to `pending`, due now."""
    stmt = (
        update(DELIVERIES)
        .where(
            DELIVERIES.c.status == DeliveryStatus.SENDING,
            DELIVERIES.c.claimed_at < claimed_before,
        )
        .values(status=DeliveryStatus.PENDING, claimed_at=None, next_attempt_at=now)
    )
    return _rowcount(conn, stmt)


def delete_deliveries_finished_before(conn: Conn, *, before: datetime) -> int:
    victims = (
        select(DELIVERIES.c.id)
        .where(DELIVERIES.c.finished_at < before)
        .limit(DELETE_BATCH)
        .scalar_subquery()
    )
    return _rowcount(conn, delete(DELIVERIES).where(DELIVERIES.c.id.in_(victims)))


def list_deliveries(
    session: Session, *, webhook_id: str, limit: int, before: tuple[datetime, str] | None
) -> list[WebhookDelivery]:
    """Newest first; `before`: (created_at, id) of the last row of the previous page."""
    stmt = select(WebhookDelivery).where(col(WebhookDelivery.webhook_id) == webhook_id)
    if before is not None:
        created, last_id = before
        stmt = stmt.where(
            or_(
                col(WebhookDelivery.created_at) < created,
                and_(col(WebhookDelivery.created_at) == created, col(WebhookDelivery.id) < last_id),
            )
        )
    stmt = stmt.order_by(
        col(WebhookDelivery.created_at).desc(),
        col(WebhookDelivery.id).desc(),
    ).limit(limit)
    return list(session.execute(stmt).scalars().all())


def attempts_of(session: Session, *, delivery_ids: Sequence[str]) -> list[WebhookAttempt]:
    if not delivery_ids:
        return []
    stmt = (
        select(WebhookAttempt)
        .where(col(WebhookAttempt.delivery_id).in_(list(delivery_ids)))
        .order_by(col(WebhookAttempt.delivery_id), col(WebhookAttempt.attempt))
    )
    return list(session.execute(stmt).scalars().all())


def _rowcount(conn: Conn, stmt: Executable) -> int:
    """The rows a DML statement touched (a cursor's result, in a Session or a Connection)."""
    result = cast("CursorResult[Any]", conn.execute(stmt))
    return int(result.rowcount or 0)
