"""Events recorded by the use cases (`service.events`), over a real database and a real
Valkey (no worker process): per-owner ids, the facts each event carries, the live
channel, webhook deliveries made for the types a webhook wants, and the sweep."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import update

from contextq.settings import get_settings
from service import event_buffer, events, history, webhooks
from service import files as fp
from store.blobs import get_blob_store
from store.db import read_session, session_scope
from store.event_channel import channel
from store.event_tables import Event, WebhookDelivery
from store.tables import File, utcnow
from tests.support.db import all_rows

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _events(owner_id: str, after: int = 0) -> list[dict[str, Any]]:
    with read_session() as session:
        return events.events_after(
            session=session, settings=get_settings(), owner_id=owner_id, after_id=after
        )


def _file(owner: Any, data: bytes, filename: str = "a.txt") -> File:
    sha = get_blob_store().put_bytes(data)
    row = File(owner_id=owner.owner_id, filename=filename, size_bytes=len(data), sha256=sha)
    with session_scope() as s:
        s.add(row)
    return row


@BOTH_BACKENDS
def test_each_owner_has_its_own_increasing_ids(stack, make_owner) -> None:
    alice, bob = make_owner("alice"), make_owner("bob")
    for i in range(3):
        events.record(None, owner_id=alice.owner_id, type=events.FILE_READY, data={"i": i})
    events.record(None, owner_id=bob.owner_id, type=events.FILE_FAILED, data={"i": 9})
    got = _events(alice.owner_id)
    assert [(e["id"], e["type"], e["data"]) for e in got] == [
        (1, "file.ready", {"i": 0}),
        (2, "file.ready", {"i": 1}),
        (3, "file.ready", {"i": 2}),
    ]
    assert [e["id"] for e in _events(bob.owner_id)] == [1]
    assert [e["id"] for e in _events(alice.owner_id, after=2)] == [3]
    with read_session() as session:
        assert events.latest_event_id(session=session, owner_id=alice.owner_id) == 3
    assert got[0]["timestamp"].endswith("Z")


@BOTH_BACKENDS
def test_a_processed_file_records_ready_or_failed_with_its_facts(stack, owner) -> None:
    good = _file(owner, b"hello events\n")
    bad = _file(owner, b"\x00\x01\x02\x03" * 100, filename="blob.bin")
    fp.process_file(settings=get_settings(), file_id=good.id)
    fp.process_file(settings=get_settings(), file_id=bad.id)
    fp.process_file(settings=get_settings(), file_id=good.id)  # redelivery: no new event
    got = _events(owner.owner_id)
    assert [(e["type"], e["data"]["id"]) for e in got] == [
        ("file.ready", good.id),
        ("file.failed", bad.id),
    ]
    ready = got[0]["data"]
    assert ready["status"] == "ready" and ready["filename"] == "a.txt"
    assert ready["token_count"] == ready["processed_token_count"] > 0
    assert "owner_id" not in ready
    assert got[1]["data"]["error"]


def test_events_are_published_on_the_owners_channel_after_commit(stack, owner) -> None:
    listener = redis.Redis.from_url(stack.redis_url).pubsub(ignore_subscribe_messages=True)
    listener.subscribe(channel(owner.owner_id))
    try:
        with session_scope() as session:
            events.record(session, owner_id=owner.owner_id, type="file.ready", data={"x": 1})
            assert listener.get_message(timeout=0.5) is None  # nothing before the commit
        message = listener.get_message(timeout=5)
        assert message is not None
        assert json.loads(message["data"]) == {
            "id": 1,
            "type": "file.ready",
            "timestamp": _events(owner.owner_id)[0]["timestamp"],
            "data": {"x": 1},
        }
        with pytest.raises(RuntimeError), session_scope() as session:
            events.record(session, owner_id=owner.owner_id, type="file.ready", data={"x": 2})
            raise RuntimeError("rolled back")
        assert listener.get_message(timeout=0.5) is None
        assert len(_events(owner.owner_id)) == 1
    finally:
        listener.close()


def _past_threshold(owner: Any, **conv: Any) -> str:
    with session_scope() as session:
        row = history.create_conversation(
            session=session,
            settings=get_settings(),
            owner_id=owner.owner_id,
            data={"model": "gpt-4o", **conv},
        )
    with session_scope() as session:
        history.append_messages(
            session=session,
            settings=get_settings(),
            owner_id=owner.owner_id,
            conversation_id=row.id,
            messages=[
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"turn {i} " + "lorem " * 90,
                }
                for i in range(40)
            ],
        )
    return row.id


def _build(owner: Any, cid: str, **kw: Any) -> dict[str, Any]:
    with read_session() as session:
        return history.build_context(
            session=session,
            settings=get_settings(),
            owner_id=owner.owner_id,
            conversation_id=cid,
            **kw,
        )


@pytest.mark.stack_env(MAX_CONTEXT_TOKENS="4000")
def test_context_reads_record_filtered_and_unknown_strategy_off_the_request_path(
    stack, owner
) -> None:
    cid = _past_threshold(owner)
    answer = _build(owner, cid)
    assert answer["filtered"] is True
    unknown = _build(owner, cid, strategy="no-such-strategy")
    assert unknown["strategy"] == "noop"
    assert _events(owner.owner_id) == []  # buffered, not yet written
    event_buffer.flush()
    got = _events(owner.owner_id)
    assert [e["type"] for e in got] == ["context.filtered", "context.strategy_unknown"]
    data = got[0]["data"]
    assert data["conversation_id"] == cid and data["strategy"] == "token_budget"
    assert data["removed_message_ids"] == answer["removed_message_ids"]
    assert data["removed_message_count"] == len(answer["removed_message_ids"]) > 0
    assert data["usage_before"] > data["usage_after"]
    assert data["kept_message_count"] == answer["kept_message_count"]
    assert data["duration_ms"] == answer["duration_ms"]
    assert got[1]["data"] == {
        "conversation_id": cid,
        "strategy": "no-such-strategy",
        "used": "noop",
    }


@pytest.mark.stack_env(MAX_CONTEXT_TOKENS="4000", CONTEXT_EVENTS="false")
def test_context_events_can_be_turned_off(stack, owner) -> None:
    cid = _past_threshold(owner)
    assert _build(owner, cid)["filtered"] is True
    event_buffer.flush()
    assert _events(owner.owner_id) == []


@pytest.mark.stack_env(MAX_CONTEXT_TOKENS="4000")
def test_compaction_events(stack, owner) -> None:
    cid = _past_threshold(owner)
    settings = get_settings()
    result = history.run_compaction(conversation_id=cid, job_id=None, settings=settings)
    assert "compaction_id" in result
    history.run_compaction(conversation_id=cid, job_id=None, settings=settings)  # skipped
    events.compaction_finished(
        settings=settings, conversation_id=cid, job_id="j1", error="ValueError: boom"
    )
    got = _events(owner.owner_id)
    assert [e["type"] for e in got] == ["compaction.succeeded", "compaction.failed"]
    assert got[0]["data"]["compaction_id"] == result["compaction_id"]
    assert got[0]["data"]["conversation_id"] == cid
    assert got[1]["data"] == {"conversation_id": cid, "job_id": "j1", "error": "ValueError: boom"}


@pytest.mark.stack_env(WEBHOOK_ALLOWED_HOSTS="127.0.0.1")
def test_deliveries_only_for_the_types_a_webhook_wants(stack, make_owner) -> None:
    alice, bob = make_owner("alice"), make_owner("bob")
    with session_scope() as session:
        hook = webhooks.create_webhook(
            session=session,
            settings=get_settings(),
            owner_id=alice.owner_id,
            url="http://127.0.0.1:9/hook",
            events=["file.failed"],
        )
    for owner, kind in ((alice, "file.ready"), (alice, "file.failed"), (bob, "file.failed")):
        events.record(None, owner_id=owner.owner_id, type=kind, data={})
    (delivery,) = all_rows(WebhookDelivery)
    assert (delivery.webhook_id, delivery.event_seq, delivery.event_type) == (
        hook.id,
        2,
        "file.failed",
    )
    body = json.loads(delivery.body)
    assert body["type"] == "file.failed" and body["data"] == {} and body["timestamp"]


@BOTH_BACKENDS
def test_the_sweep_deletes_expired_events_and_ids_keep_growing(stack, owner) -> None:
    for _ in range(3):
        events.record(None, owner_id=owner.owner_id, type="file.ready", data={})
    old = utcnow() - timedelta(days=2)
    with session_scope() as session:
        session.execute(update(Event).where(Event.seq <= 2).values(created_at=old))
    out = events.sweep_events(settings=get_settings())
    assert out["expired_events"] == 2
    assert [e.seq for e in all_rows(Event)] == [3]
    events.record(None, owner_id=owner.owner_id, type="file.ready", data={})
    assert [e["id"] for e in _events(owner.owner_id)] == [3, 4]
