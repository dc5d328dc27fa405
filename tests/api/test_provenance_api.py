"""Provenance over HTTP (docs/provenance.md), in-process: `GET …/messages?seqs=12,40` returns the
originals a summary line cites (owner-checked, bad seqs 422), and the memory's API takes
the seqs a goal, a decision or an error came from and summaries cite them."""

from __future__ import annotations

from typing import Any

from contextq.history import ExtractiveSummarizer, HierarchicalMemory, Message, compact
from contextq.history.provenance import summary_items
from contextq.settings import Settings

CONVERSATIONS = "/v1/conversations"


def _conversation(client: Any, messages: list[dict[str, Any]]) -> str:
    r = client.post(CONVERSATIONS, json={"title": "provenance"})
    assert r.status_code == 201, r.text
    cid = str(r.json()["id"])
    r = client.post(f"{CONVERSATIONS}/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text
    return cid


def _messages(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 else "assistant", "content": f"message number {i}"}
        for i in range(1, n + 1)
    ]


def test_seqs_return_the_originals_in_order(app_client: Any) -> None:
    cid = _conversation(app_client, _messages(12))
    r = app_client.get(f"{CONVERSATIONS}/{cid}/messages", params={"seqs": "12,3, #7,3"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [m["seq"] for m in body["data"]] == [3, 7, 12]
    assert [m["content"] for m in body["data"]] == [f"message number {i}" for i in (3, 7, 12)]
    assert body["next_cursor"] is None
    assert {"id", "role", "token_count", "created_at"} <= set(body["data"][0])


def test_bad_seqs_are_422_naming_them(app_client: Any) -> None:
    cid = _conversation(app_client, _messages(5))
    url = f"{CONVERSATIONS}/{cid}/messages"
    for given, said in [
        ("6", "no message with seq 6"),
        ("0,2", "no message with seq 0"),
        ("a,b", "separated by commas"),
        ("", "separated by commas"),
        ("1,-2", "separated by commas"),
        (",".join(str(i) for i in range(1, 300)), "at most 200"),
    ]:
        r = app_client.get(url, params={"seqs": given})
        assert r.status_code == 422, (given, r.text)
        assert said in r.text, (given, r.text)
    r = app_client.get(url, params={"seqs": "6"})
    assert r.json()["detail"][0]["loc"] == ["query", "seqs"]  # where the client wrote it
    r = app_client.get(url, params={"seqs": "1", "cursor": "2"})
    assert r.status_code == 422 and "cursor" in r.text


def test_seqs_are_owner_checked(app_client: Any, make_owner: Any) -> None:
    cid = _conversation(app_client, _messages(3))
    other = make_owner("not-the-owner")
    r = app_client.get(f"{CONVERSATIONS}/{cid}/messages?seqs=1", headers=other.headers)
    assert r.status_code == 404


def test_memory_writes_take_the_seqs_they_came_from(app_client: Any) -> None:
    messages = _messages(6)
    messages[3] = {"role": "user", "content": "Ship the importer; first parse, then index."}
    messages[4] = {"role": "assistant", "content": "Use SQLite for the cache, it is local."}
    cid = _conversation(app_client, messages)
    mem = f"{CONVERSATIONS}/{cid}/memory"
    goal = {"text": "Ship the importer", "subtasks": ["parse", "index"], "seqs": [4]}
    assert app_client.put(f"{mem}/goal", json=goal).status_code == 200
    decision = {"decision": "Use SQLite for the cache", "rationale": "local", "seqs": [5]}
    assert app_client.post(f"{mem}/decisions", json=decision).status_code == 201
    r = app_client.post(f"{mem}/errors", json={"error": "disk full", "seqs": [6]})
    assert r.status_code == 200 and set(r.json()) == {"pattern", "count", "alert", "last_seen"}
    for path, body in [
        ("/goal", {**goal, "seqs": [99]}),
        ("/decisions", {**decision, "seqs": [0]}),
        ("/errors", {"error": "x", "seqs": [7]}),
    ]:
        method = app_client.put if path == "/goal" else app_client.post
        r = method(f"{mem}{path}", json=body)
        assert r.status_code == 422 and "seqs" in r.text, (path, r.text)
    exported = app_client.get(f"{mem}/export").json()
    assert exported["goal_seqs"] == [4]
    assert exported["subtasks"][0]["seqs"] == [4]
    assert exported["decisions"][0]["seqs"] == [5]
    assert exported["error_patterns"]["disk full"]["seqs"] == [6]
    snapshot = app_client.get(mem).json()  # GET /memory keeps its documented fields
    assert "seqs" not in snapshot["decisions"][0]
    # a summary written from this memory cites those messages
    memory = HierarchicalMemory.import_state(exported)
    history = app_client.get(f"{CONVERSATIONS}/{cid}/messages").json()["data"]
    engine = [
        Message(role=m["role"], content=m["content"], seq=m["seq"], token_count=m["token_count"])
        for m in history
    ]
    out = compact(
        engine,
        ExtractiveSummarizer(),
        Settings(),
        memory=memory,
        target_tokens=300,
        keep_recent_tokens=1,
    )
    assert out is not None
    cited = {i.content: i.seqs for i in summary_items(out.summary)}
    assert cited["Ship the importer"] == (4,) and cited["Use SQLite for the cache"] == (5,)
