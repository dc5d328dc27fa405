"""Events (docs/events.md): what happened to an owner's files, compactions and context reads.

Each event is recorded from the ONE place it happens, with one call:

- `file_finished(conn, file_id=…)`: `file.ready` / `file.failed`, in the transaction that
  wrote the final status (`service.files.processing`; also the claim that finds a file
  out of attempts and the recovery sweep, with `None`: a transaction of its own);
- `compaction_finished(…)`: `compaction.succeeded` / `compaction.failed`
  (`service.history.compaction.run_compaction`);
- `context_built(…)`: `context.filtered` / `context.strategy_unknown` from the context
  answer (`service.history.context.build_context`). A context read must stay fast, so
  these go to a per-process buffer written in batches by a background thread
  (`service.event_buffer`), never on the request's path.

Recording takes the owner's next event id (`store.events_queries.allocate_seqs`), inserts
the event and one delivery per webhook that wants its type. Once that commits, the event
is published on the owner's Redis channel (live `GET /v1/events` readers) and each
delivery is enqueued (`service.enqueue.deliver_webhook`). Events are kept
EVENT_RETENTION_S (24 h) and swept by beat (`sweep_events`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import Connection
from sqlalchemy.orm import Session

from contextq.history import STRATEGY_NAMES
from contextq.settings import Settings, get_settings
from service import enqueue, event_buffer, webhook_delivery
from store import events_queries as q
from store.db import get_engine, session_scope
from store.event_channel import publish_events
from store.event_tables import DeliveryStatus
from store.files_queries import aware
from store.tables import FileStatus, new_id, utcnow

log = logging.getLogger("contextq.events")

FILE_READY = "file.ready"
FILE_FAILED = "file.failed"
COMPACTION_SUCCEEDED = "compaction.succeeded"
COMPACTION_FAILED = "compaction.failed"
CONTEXT_FILTERED = "context.filtered"
CONTEXT_STRATEGY_UNKNOWN = "context.strategy_unknown"
EVENT_TYPES = (
    FILE_READY,
    FILE_FAILED,
    COMPACTION_SUCCEEDED,
    COMPACTION_FAILED,
    CONTEXT_FILTERED,
    CONTEXT_STRATEGY_UNKNOWN,
)
# a context.filtered event lists at most this many removed message ids (and says so)
MAX_REMOVED_IDS = 1000
PAGE = 500

Conn = Session | Connection


@dataclass(frozen=True)
class NewEvent:
    owner_id: str
    type: str
    data: Mapping[str, Any]


@dataclass
class Recorded:
    """What to do once the recording transaction has committed: publish and enqueue."""

    messages: list[tuple[str, bytes]] = field(default_factory=list)  # (owner id, payload)
    deliveries: list[str] = field(default_factory=list)


def envelope(type_: str, created_at: datetime, data: Mapping[str, Any]) -> dict[str, Any]:
    """The body of a webhook delivery and the `data:` of an SSE event (the timestamp in
    UTC, written as the API writes its datetimes: `…Z`)."""
    stamp = created_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return {"type": type_, "timestamp": stamp, "data": data}


def record_many(conn: Conn, events: Sequence[NewEvent]) -> Recorded:
    """Insert `events` in `conn`'s transaction, with their webhook deliveries. The caller
    commits, then calls `publish(settings, recorded)` (a Session does it by itself when
    recorded through `record`)."""
    now = utcnow()
    by_owner: dict[str, list[NewEvent]] = {}
    for event in events:
        by_owner.setdefault(event.owner_id, []).append(event)
    hooks = q.subscribed_webhooks(conn, owner_ids=list(by_owner))
    rows: list[dict[str, Any]] = []
    deliveries: list[dict[str, Any]] = []
    out = Recorded()
    for owner_id in sorted(by_owner):  # one lock order across owners
        batch = by_owner[owner_id]
        last = q.allocate_seqs(conn, owner_id=owner_id, count=len(batch))
        for seq, event in enumerate(batch, start=last - len(batch) + 1):
            data = dict(event.data)
            rows.append(
                {
                    "owner_id": owner_id,
                    "seq": seq,
                    "type": event.type,
                    "data": data,
                    "created_at": now,
                }
            )
            body = envelope(event.type, now, data)
            out.messages.append((owner_id, orjson.dumps({"id": seq, **body})))
            for hook_id, hook_owner, wanted in hooks:
                if hook_owner == owner_id and event.type in wanted:
                    deliveries.append(_delivery(hook_id, seq, event.type, body, now))
    q.insert_events(conn, rows=rows)
    q.insert_deliveries(conn, rows=deliveries)
    out.deliveries = [d["id"] for d in deliveries]
    return out


def _delivery(
    webhook_id: str, seq: int, type_: str, body: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    return {
        "id": new_id(),
        "webhook_id": webhook_id,
        "event_seq": seq,
        "event_type": type_,
        "body": orjson.dumps(body).decode(),
        "status": DeliveryStatus.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "created_at": now,
    }


def publish(settings: Settings | None, recorded: Recorded | None) -> None:
    """After the commit: tell live readers and enqueue the deliveries. Never raises."""
    if recorded is None:
        return
    settings = settings or get_settings()
    publish_events(settings.REDIS_URL, recorded.messages)
    for delivery_id in recorded.deliveries:
        enqueue.now_or_log(enqueue.deliver_webhook, delivery_id, settings=settings)


def record(
    conn: Conn | None,
    *,
    owner_id: str,
    type: str,
    data: Mapping[str, Any],
    settings: Settings | None = None,
) -> Recorded | None:
    """Record one event. In a Session: published once it commits. In a Connection:
    returned for the caller to `publish` after its commit. None: in a transaction of its
    own, published at once (returns None)."""
    event = NewEvent(owner_id, type, data)
    if conn is None:
        with get_engine(settings).begin() as own:
            recorded = record_many(own, [event])
        publish(settings, recorded)
        return None
    recorded = record_many(conn, [event])
    if isinstance(conn, Session):
        enqueue.after_commit(conn, publish, settings, recorded)
        return None
    return recorded


# --- the events of the use cases -----------------------------------------------------------
def file_finished(
    conn: Connection | None, *, file_id: str, settings: Settings | None = None
) -> Recorded | None:
    """`file.ready` or `file.failed` with the file's final facts. With a Connection (the
    transaction that wrote the status) the caller publishes after its commit."""
    if conn is None:
        with get_engine(settings).begin() as own:
            recorded = file_finished(own, file_id=file_id)
        publish(settings, recorded)
        return None
    facts = q.file_facts(conn, file_id=file_id)
    if facts is None or facts["status"] not in (FileStatus.READY, FileStatus.FAILED):
        return None
    owner_id = facts.pop("owner_id")
    kind = FILE_READY if facts["status"] == FileStatus.READY else FILE_FAILED
    return record_many(conn, [NewEvent(owner_id, kind, facts)])


def compaction_finished(
    *,
    settings: Settings,
    conversation_id: str,
    job_id: str | None,
    result: Mapping[str, Any] | None = None,
    error: str | None = None,
) -> None:
    """`compaction.succeeded` (a result with a `compaction_id`) or `compaction.failed`
    (an `error`); a run that skipped records nothing. Never raises."""
    if error is None and (result is None or "compaction_id" not in result):
        return
    try:
        with session_scope() as session:
            owner_id = q.conversation_owner(session, conversation_id=conversation_id)
            if owner_id is None:
                return
            data: dict[str, Any] = {"conversation_id": conversation_id, "job_id": job_id}
            if error is not None:
                record(
                    session,
                    owner_id=owner_id,
                    type=COMPACTION_FAILED,
                    data={**data, "error": error},
                    settings=settings,
                )
            else:
                record(
                    session,
                    owner_id=owner_id,
                    type=COMPACTION_SUCCEEDED,
                    data={**data, **(result or {})},
                    settings=settings,
                )
    except Exception:
        log.exception("could not record the compaction event of %s", conversation_id)


def context_built(
    *, settings: Settings, owner_id: str, answer: Mapping[str, Any], requested: str | None
) -> None:
    """`context.strategy_unknown` when `requested` named no strategy we have, and
    `context.filtered` when the answer was filtered: buffered, written off the request's
    path (CONTEXT_EVENTS=false records neither)."""
    if not settings.CONTEXT_EVENTS:
        return
    buffer = event_buffer.buffer(write_buffered)
    conversation_id = answer.get("conversation_id")
    if requested and requested not in STRATEGY_NAMES:
        data = {
            "conversation_id": conversation_id,
            "strategy": requested,
            "used": answer.get("strategy"),
        }
        buffer.add(NewEvent(owner_id, CONTEXT_STRATEGY_UNKNOWN, data))
    if answer.get("filtered"):
        buffer.add(NewEvent(owner_id, CONTEXT_FILTERED, filtered_data(answer)))


def write_buffered(batch: list[NewEvent]) -> None:
    """The buffer's writer: `batch` in one transaction of the current settings' database,
    then published."""
    with get_engine().begin() as conn:
        recorded = record_many(conn, batch)
    publish(get_settings(), recorded)


def filtered_data(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The seed's ContextFiltered: conversation, strategy, counts, removed ids, usage
    before/after, duration."""
    removed = list(answer.get("removed_message_ids") or ())
    return {
        "conversation_id": answer.get("conversation_id"),
        "model": answer.get("model"),
        "strategy": answer.get("strategy"),
        "original_message_count": answer.get("original_message_count"),
        "kept_message_count": answer.get("kept_message_count"),
        "removed_message_count": len(removed),
        "removed_message_ids": removed[:MAX_REMOVED_IDS],
        "removed_message_ids_truncated": len(removed) > MAX_REMOVED_IDS,
        "token_count": answer.get("token_count"),
        "budget_tokens": answer.get("budget_tokens"),
        "usage_before": answer.get("usage_before"),
        "usage_after": answer.get("usage_after"),
        "duration_ms": answer.get("duration_ms"),
        "cleared_tool_result_ids": list(answer.get("cleared_tool_result_ids") or ())[
            :MAX_REMOVED_IDS
        ],
    }


# --- reading -------------------------------------------------------------------------------
def events_after(
    *, session: Session, settings: Settings, owner_id: str, after_id: int, limit: int = PAGE
) -> list[dict[str, Any]]:
    """The owner's kept events after id `after_id`, oldest first, each
    `{"id", "type", "timestamp", "data"}`."""
    since = utcnow() - timedelta(seconds=settings.EVENT_RETENTION_S)
    rows = q.events_after(
        session, owner_id=owner_id, after_seq=after_id, since=since, limit=max(1, limit)
    )
    return [{"id": r.seq, **envelope(r.type, _aware(r.created_at), r.data)} for r in rows]


def latest_event_id(*, session: Session, owner_id: str) -> int:
    """The id of the owner's newest event (0: none yet)."""
    return q.latest_seq(session, owner_id=owner_id)


def _aware(ts: datetime) -> datetime:
    return aware(ts) or ts


def sweep_events(*, settings: Settings) -> dict[str, Any]:
    """Beat: delete expired events and old finished deliveries, send due deliveries."""
    cutoff = utcnow() - timedelta(seconds=settings.EVENT_RETENTION_S)
    deleted = 0
    while True:
        with session_scope() as session:
            batch = q.delete_events_before(session, before=cutoff)
        deleted += batch
        if batch < q.DELETE_BATCH:
            break
    with session_scope() as session:
        old_deliveries = q.delete_deliveries_finished_before(session, before=cutoff)
    sent = webhook_delivery.send_due(settings=settings)
    if deleted or old_deliveries:
        log.info("events sweep: %d event(s), %d delivery(ies) expired", deleted, old_deliveries)
    return {"expired_events": deleted, "expired_deliveries": old_deliveries, "sent": sent}
