"""Events and webhooks with the real parts (docs/events.md): a real worker, the API under uvicorn,
`GET /v1/events` read as a stream, and local HTTP receivers that verify each delivery with
the `standardwebhooks` library."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import ApiServer
from tests.support.files import upload, wait_file_done
from tests.support.procs import wait_until
from tests.support.receivers import SseReader, WebhookReceiver

pytestmark = pytest.mark.integration

LOOPBACK = {"WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}


def _hook(client: Any, url: str, events: list[str], **extra: Any) -> dict[str, Any]:
    resp = client.post("/v1/webhooks", json={"url": url, "events": events, **extra})
    assert resp.status_code == 201, resp.text
    return resp.json()


def _deliveries(client: Any, hook_id: str) -> list[dict[str, Any]]:
    resp = client.get(f"/v1/webhooks/{hook_id}/deliveries")
    assert resp.status_code == 200, resp.text
    return resp.json()["data"]


@pytest.mark.stack_env(EVENTS_HEARTBEAT_S="1")
def test_events_stream_while_uploading_and_resume(stack, worker, api_server, client, owner) -> None:
    reader = SseReader(api_server.base_url, owner.key)
    try:
        assert reader.status == 200 and reader.content_type.startswith("text/event-stream")
        good = upload(client, "notes.txt", b"events as they happen\n")
        bad = upload(client, "blob.bin", b"\x00\x01\x02\x03" * 64)
        got = reader.wait_events(lambda e: len(e) >= 2, what="two file events on the stream")
        by_file = {e["data"]["id"]: e for e in got}
        assert by_file[good["id"]]["event"] == by_file[good["id"]]["type"] == "file.ready"
        assert by_file[bad["id"]]["type"] == "file.failed" and by_file[bad["id"]]["data"]["error"]
        assert sorted(e["id"] for e in got) == [1, 2]
        # heartbeats keep an idle stream open
        wait_until(
            lambda: any("heartbeat" in m.comments for m in reader.messages),
            timeout=10,
            what="a heartbeat comment",
        )
    finally:
        reader.close()
    # a client that saw id 1 resumes with Last-Event-ID and gets what followed, and live
    resumed = SseReader(api_server.base_url, owner.key, last_event_id=1)
    try:
        first = resumed.wait_events(lambda e: e, what="the replayed event")
        assert [e["id"] for e in first] == [2]
        third = upload(client, "third.txt", b"after the resume\n")
        later = resumed.wait_events(lambda e: len(e) >= 2, what="the live event after the replay")
        assert [e["id"] for e in later] == [2, 3] and later[1]["data"]["id"] == third["id"]
    finally:
        resumed.close()


def test_events_stream_needs_a_key_and_shows_only_the_owners_events(
    stack, worker, api_server, client, make_owner
) -> None:
    import httpx

    assert httpx.get(f"{api_server.base_url}/v1/events", timeout=10).status_code == 401
    other = make_owner("bob")
    theirs = SseReader(api_server.base_url, other.key, last_event_id=0)
    try:
        wait_file_done(client, upload(client, "mine.txt", b"not bob's\n")["id"])
        with api_server.client(other.key) as bob:
            bobs = upload(bob, "bobs.txt", b"bob's own\n")
        got = theirs.wait_events(lambda e: e, what="bob's event")
        assert [(e["id"], e["data"]["id"]) for e in got] == [(1, bobs["id"])]
    finally:
        theirs.close()


@pytest.mark.stack_env(**LOOPBACK)
def test_signed_delivery_verified_by_standardwebhooks(stack, worker, client) -> None:
    receiver = WebhookReceiver()
    try:
        hook = _hook(client, receiver.url, ["file.ready"])
        receiver.secret = hook["secret"]
        body = upload(client, "signed.txt", b"sign me\n")
        (got,) = receiver.wait_for(1)
        assert isinstance(got.verified, dict), got.verified  # the signature checks out
        assert got.verified["type"] == "file.ready"
        assert got.verified["data"]["id"] == body["id"]
        assert set(got.verified) == {"type", "timestamp", "data"}
        assert got.path == "/hook" and got.headers["content-type"] == "application/json"
        assert got.headers["webhook-signature"].startswith("v1,")

        def succeeded() -> list[dict[str, Any]]:
            return [d for d in _deliveries(client, hook["id"]) if d["status"] == "succeeded"]

        (delivery,) = wait_until(succeeded, timeout=30, what="the delivery to be succeeded")
        assert delivery["id"] == got.headers["webhook-id"]
        assert delivery["event_type"] == "file.ready" and delivery["event_id"] == 1
        assert [(a["attempt"], a["status_code"]) for a in delivery["attempts"]] == [(1, 200)]
    finally:
        receiver.close()


@pytest.mark.stack_env(WEBHOOK_RETRY_DELAYS_S="1,1,1", **LOOPBACK)
def test_a_receiver_failing_twice_gets_the_third_attempt(stack, worker, client) -> None:
    receiver = WebhookReceiver(statuses=[500, 503])
    try:
        hook = _hook(client, receiver.url, ["file.ready", "file.failed"])
        receiver.secret = hook["secret"]
        upload(client, "retried.txt", b"third time lucky\n")
        got = receiver.wait_for(3)
        assert [r.status for r in got] == [500, 503, 200]
        assert len({r.headers["webhook-id"] for r in got}) == 1  # one message, three attempts
        assert all(isinstance(r.verified, dict) for r in got)

        def finished() -> list[dict[str, Any]]:
            return [d for d in _deliveries(client, hook["id"]) if d["status"] == "succeeded"]

        (delivery,) = wait_until(finished, timeout=30, what="the delivery to succeed")
        attempts = delivery["attempts"]
        assert [(a["attempt"], a["status_code"]) for a in attempts] == [
            (1, 500),
            (2, 503),
            (3, 200),
        ]
        assert attempts[0]["error"].startswith("HTTP 500") and attempts[2]["error"] is None
        assert delivery["last_status_code"] == 200 and delivery["finished_at"]
    finally:
        receiver.close()


@pytest.mark.stack_env(WEBHOOK_RETRY_DELAYS_S="1", **LOOPBACK)
def test_redirects_are_not_followed_and_retries_end_failed(stack, worker, client) -> None:
    target = WebhookReceiver()
    receiver = WebhookReceiver(statuses=[302, 302], redirect_to=target.url)
    try:
        hook = _hook(client, receiver.url, ["file.ready"])
        upload(client, "redirected.txt", b"go elsewhere\n")

        def failed() -> list[dict[str, Any]]:
            return [d for d in _deliveries(client, hook["id"]) if d["status"] == "failed"]

        (delivery,) = wait_until(failed, timeout=30, what="the delivery to fail")
        assert [a["status_code"] for a in delivery["attempts"]] == [302, 302]
        assert "not followed" in delivery["last_error"]
        assert target.received == []
    finally:
        receiver.close()
        target.close()


def test_the_worker_checks_the_address_again_when_it_delivers(
    stack, worker, tmp_path, owner
) -> None:
    """The API allowed the host (WEBHOOK_ALLOWED_HOSTS), the worker does not: the delivery
    is refused after resolving, and nothing reaches the receiver."""
    receiver = WebhookReceiver()
    permissive = stack.with_overrides(**LOOPBACK)
    try:
        with ApiServer(permissive, log_dir=tmp_path / "logs") as api, api.client(owner.key) as c:
            hook = _hook(c, receiver.url, ["file.ready"])
            upload(c, "refused.txt", b"not to loopback\n")

            def attempted() -> list[dict[str, Any]]:
                return [d for d in _deliveries(c, hook["id"]) if d["attempts"]]

            (delivery,) = wait_until(attempted, timeout=30, what="a refused attempt")
        (attempt,) = delivery["attempts"][:1]
        assert attempt["status_code"] is None
        assert "refused" in attempt["error"] and "loopback" in attempt["error"]
        assert delivery["status"] == "pending" and delivery["next_attempt_at"]
        assert receiver.received == []
    finally:
        receiver.close()


@pytest.mark.stack_env(MAX_CONTEXT_TOKENS="4000", EVENTS_HEARTBEAT_S="1")
def test_a_filtered_context_read_is_an_event(stack, api_server, client, owner) -> None:
    cid = client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    batch = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "lorem " * 90}
        for i in range(40)
    ]
    assert (
        client.post(f"/v1/conversations/{cid}/messages", json={"messages": batch}).status_code
        == 201
    )
    reader = SseReader(api_server.base_url, owner.key)
    try:
        answer = client.get(f"/v1/conversations/{cid}/context").json()
        assert answer["filtered"] is True
        client.get(f"/v1/conversations/{cid}/context", params={"strategy": "nope"})
        got = reader.wait_events(lambda e: len(e) >= 2, what="the context events")
        assert [e["type"] for e in got] == ["context.filtered", "context.strategy_unknown"]
        assert got[0]["data"]["removed_message_ids"] == answer["removed_message_ids"]
        assert got[0]["data"]["usage_after"] == answer["usage_after"]
    finally:
        reader.close()


def test_contextq_events_prints_each_event_and_resumes(stack, worker, api_server, client, owner):
    import subprocess
    import sys

    from tests.support import PROJECT_ROOT

    first = wait_file_done(client, upload(client, "one.txt", b"first\n")["id"])
    second = wait_file_done(client, upload(client, "two.txt", b"second\n")["id"])
    argv = [sys.executable, "-m", "cli.main", "events", "--last-event-id", "1"]
    argv += ["--api", api_server.base_url, "--key", owner.key]
    proc = subprocess.Popen(
        argv,
        cwd=PROJECT_ROOT,
        env=stack.subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the event after id 1 only
        assert line.startswith("2 ") and " file.ready " in line and second["id"] in line
        assert first["id"] not in line
        third = upload(client, "three.txt", b"third\n")
        live = proc.stdout.readline()
        assert live.startswith("3 ") and third["id"] in live
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
