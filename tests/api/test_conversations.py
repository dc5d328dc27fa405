"""History routes in-process (FastAPI TestClient over a migrated SQLite DATA_DIR).

No worker here: compaction through the real queue is in tests/integration/test_history_*.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from contextq.history.message_tokens import count_message_tokens


def _conv(client: Any, **body: Any) -> dict[str, Any]:
    r = client.post("/v1/conversations", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def _fields(detail: Any) -> list[str]:
    return [".".join(str(p) for p in e["loc"]) for e in detail]


def test_create_get_patch_delete(app_client: Any) -> None:
    conv = _conv(
        app_client,
        title="t",
        model="gpt-4o",
        context_strategy="sliding_window",
        context_options={"window_size": 5},
        system_prompt="be brief",
    )
    assert conv["context_options"] == {"window_size": 5}
    assert conv["message_count"] == 0
    got = app_client.get(f"/v1/conversations/{conv['id']}").json()
    assert got["title"] == "t" and got["system_prompt"] == "be brief"
    r = app_client.patch(f"/v1/conversations/{conv['id']}", json={"title": "u"})
    assert r.status_code == 200 and r.json()["title"] == "u"
    assert r.json()["context_strategy"] == "sliding_window"
    assert app_client.delete(f"/v1/conversations/{conv['id']}").status_code == 204
    assert app_client.get(f"/v1/conversations/{conv['id']}").status_code == 404


def test_empty_body_creates_defaults(app_client: Any) -> None:
    r = app_client.post("/v1/conversations")
    assert r.status_code == 201
    assert r.json()["context_strategy"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"context_strategy": "magic"}, "body.context_strategy"),
        (
            {"context_strategy": "sliding_window", "context_options": {"window_size": 0}},
            "body.context_options.window_size",
        ),
        (
            {"context_strategy": "token_budget", "context_options": {"bogus": 1}},
            "body.context_options.bogus",
        ),
        ({"context_options": {"budget_percentage": 2}}, "body.context_options.budget_percentage"),
        ({"context_threshold": 1.5}, "body.context_threshold"),
    ],
)
def test_bad_strategy_or_options_is_422_naming_the_field(
    app_client: Any, body: dict[str, Any], field: str
) -> None:
    r = app_client.post("/v1/conversations", json=body)
    assert r.status_code == 422, r.text
    assert field in _fields(r.json()["detail"])


def test_patch_validates_against_the_stored_strategy(app_client: Any) -> None:
    conv = _conv(app_client, context_strategy="sliding_window")
    r = app_client.patch(
        f"/v1/conversations/{conv['id']}", json={"context_options": {"reserve_tokens": 5}}
    )
    assert r.status_code == 422
    assert "body.context_options.reserve_tokens" in _fields(r.json()["detail"])
    r = app_client.patch(f"/v1/conversations/{conv['id']}", json={"context_strategy": "nope"})
    assert r.status_code == 422
    assert "body.context_strategy" in _fields(r.json()["detail"])


def test_messages_single_and_batch_with_token_counts(app_client: Any) -> None:
    conv = _conv(app_client, model="gpt-4o")
    cid = conv["id"]
    one = {"role": "user", "content": "hello there"}
    r = app_client.post(f"/v1/conversations/{cid}/messages", json=one)
    assert r.status_code == 201, r.text
    m = r.json()
    assert m["seq"] == 1 and m["id"]
    assert m["token_count"] == count_message_tokens(one, "gpt-4o")
    batch = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "kind": "decision"},
    ]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": batch})
    assert r.status_code == 201, r.text
    data = r.json()["data"]
    assert [d["seq"] for d in data] == [2, 3, 4]
    assert all(d["token_count"] > 0 for d in data)
    got = app_client.get(f"/v1/conversations/{cid}").json()
    assert got["message_count"] == 4 and got["last_seq"] == 4
    assert got["total_tokens"] == m["token_count"] + sum(d["token_count"] for d in data)
    # the original history, paged
    page = app_client.get(f"/v1/conversations/{cid}/messages", params={"limit": 3}).json()
    assert [d["seq"] for d in page["data"]] == [1, 2, 3] and page["next_cursor"]
    rest = app_client.get(
        f"/v1/conversations/{cid}/messages", params={"cursor": page["next_cursor"]}
    ).json()
    assert [d["seq"] for d in rest["data"]] == [4] and rest["next_cursor"] is None
    assert rest["data"][0]["content"] == [{"type": "text", "text": "done"}]
    # a decision message feeds the memory's decision trail
    memory = app_client.get(f"/v1/conversations/{cid}/memory").json()
    assert [d["decision"] for d in memory["decisions"]] == ["done"]


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        (
            {
                "role": "user",
                "content": "x",
                "tool_calls": [{"id": "c", "function": {"name": "f"}}],
            },
            "tool_calls",
        ),
        ({"role": "robot", "content": "x"}, "role"),
        ({"role": "user", "content": "x", "kind": "dream"}, "kind"),
        ({"role": "user", "name": "a\x00b"}, "name"),
    ],
)
def test_bad_messages_are_422(app_client: Any, message: dict[str, Any], field: str) -> None:
    cid = _conv(app_client)["id"]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json=message)
    assert r.status_code == 422, r.text
    assert any(f.endswith(field) for f in _fields(r.json()["detail"]))
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": [message]})
    assert r.status_code == 422
    assert app_client.get(f"/v1/conversations/{cid}").json()["message_count"] == 0


def test_caps_on_batch_and_message_size(app_client: Any) -> None:
    cid = _conv(app_client)["id"]
    too_many = {"messages": [{"role": "user", "content": "x"}] * 10_001}
    assert app_client.post(f"/v1/conversations/{cid}/messages", json=too_many).status_code == 413
    huge = {"role": "user", "content": "x" * 1_100_000}
    assert app_client.post(f"/v1/conversations/{cid}/messages", json=huge).status_code == 413
    assert app_client.post(f"/v1/conversations/{cid}/messages", json=[1, 2]).status_code == 422
    assert app_client.get(f"/v1/conversations/{cid}").json()["message_count"] == 0


def test_pinning_is_capped(app_client: Any) -> None:
    cid = _conv(app_client)["id"]
    eleven = [{"role": "user", "content": f"fact {i}", "pinned": True} for i in range(11)]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": eleven})
    assert r.status_code == 422
    assert "pinned" in _fields(r.json()["detail"])[0]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": eleven[:10]})
    assert r.status_code == 201
    extra = app_client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "x"}
    )
    mid = extra.json()["id"]
    r = app_client.patch(f"/v1/conversations/{cid}/messages/{mid}", json={"pinned": True})
    assert r.status_code == 422
    first = r = app_client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "y"}
    )
    assert first.status_code == 201
    pinned_id = app_client.get(f"/v1/conversations/{cid}/messages").json()["data"][0]["id"]
    r = app_client.patch(f"/v1/conversations/{cid}/messages/{pinned_id}", json={"pinned": False})
    assert r.status_code == 200 and r.json()["pinned"] is False
    r = app_client.patch(f"/v1/conversations/{cid}/messages/{mid}", json={"pinned": True})
    assert r.status_code == 200 and r.json()["pinned"] is True
    assert app_client.get(f"/v1/conversations/{cid}").json()["pinned_count"] == 10
    assert (
        app_client.patch(
            f"/v1/conversations/{cid}/messages/nope", json={"pinned": True}
        ).status_code
        == 404
    )


def test_memory_routes(app_client: Any) -> None:
    cid = _conv(app_client)["id"]
    r = app_client.put(
        f"/v1/conversations/{cid}/memory/goal",
        json={"text": "ship it", "subtasks": ["build", "test"]},
    )
    assert r.status_code == 200, r.text
    assert r.json()["goal"]["progress"] == 0
    r = app_client.post(f"/v1/conversations/{cid}/memory/subtasks/build/complete")
    assert r.status_code == 200 and r.json()["goal"]["progress"] == 0.5
    r = app_client.post(f"/v1/conversations/{cid}/memory/subtasks/nope/complete")
    assert r.status_code == 422
    r = app_client.put(f"/v1/conversations/{cid}/memory/phase", json={"phase": "testing"})
    assert r.json()["phase"] == "testing"
    r = app_client.post(
        f"/v1/conversations/{cid}/memory/decisions",
        json={"decision": "use sqlite", "rationale": "simple", "impact": "low"},
    )
    assert r.status_code == 201
    for i in range(3):
        app_client.post(
            f"/v1/conversations/{cid}/messages",
            json={
                "role": "tool",
                "tool_call_id": f"c{i}",
                "kind": "error",
                "content": f"Timeout after {i + 30}s",
            },
        )
    memory = app_client.get(f"/v1/conversations/{cid}/memory").json()
    assert memory["decisions"][0]["rationale"] == "simple"
    assert memory["goal"]["text"] == "ship it"
    patterns = {p["pattern"]: p for p in memory["error_patterns"]}
    assert patterns["timeout after Ns"]["count"] == 3 and patterns["timeout after Ns"]["alert"]


def test_compact_creates_a_queued_job(app_client: Any, make_owner: Any) -> None:
    cid = _conv(app_client)["id"]
    r = app_client.post(f"/v1/conversations/{cid}/compact")
    assert r.status_code == 202
    job_id = r.json()["job_id"]
    job = app_client.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "queued" and job["kind"] == "compact_conversation"
    other = make_owner("mallory")
    assert app_client.get(f"/v1/jobs/{job_id}", headers=other.headers).status_code == 404
    assert app_client.get(f"/v1/conversations/{cid}/compactions").json()["data"] == []


def test_owner_isolation_404_matrix(app_client: Any, make_owner: Any) -> None:
    conv = _conv(app_client)
    cid = conv["id"]
    mid = app_client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "secret"}
    ).json()["id"]
    headers = make_owner("mallory").headers
    base = f"/v1/conversations/{cid}"
    calls = [
        ("GET", base, None),
        ("PATCH", base, {"title": "x"}),
        ("DELETE", base, None),
        ("POST", f"{base}/messages", {"role": "user", "content": "x"}),
        ("GET", f"{base}/messages", None),
        ("PATCH", f"{base}/messages/{mid}", {"pinned": True}),
        ("GET", f"{base}/context", None),
        ("POST", f"{base}/compact", None),
        ("GET", f"{base}/compactions", None),
        ("GET", f"{base}/memory", None),
        ("PUT", f"{base}/memory/goal", {"text": "x"}),
        ("PUT", f"{base}/memory/phase", {"phase": "x"}),
        ("POST", f"{base}/memory/decisions", {"decision": "x"}),
        ("POST", f"{base}/memory/subtasks/a/complete", None),
    ]
    for method, url, body in calls:
        r = app_client.request(method, url, json=body, headers=headers)
        assert r.status_code == 404, (method, url, r.status_code, r.text)
        missing = app_client.request(method, url.replace(cid, "0" * 32), json=body)
        assert missing.status_code == 404, (method, url, missing.text)
    # nothing changed for the owner
    assert app_client.get(base).json()["message_count"] == 1
    assert app_client.get(base).json()["title"] is None


@pytest.mark.postgres
@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_history_routes_on_postgresql(stack: Any, app_client: Any) -> None:
    """The same tables and queries on PostgreSQL (row lock on insert, JSON columns, NUL-free)."""
    from tests.api.history_data import agent_history, check_openai_invariants

    history = agent_history(300, pinned=2)
    cid = _conv(app_client, model="gpt-4o", system_prompt="sys")["id"]
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": history})
    assert r.status_code == 201, r.text
    assert [m["seq"] for m in r.json()["data"]] == list(range(1, len(history) + 1))
    text_with_nul = {"role": "user", "content": "a\x00b"}
    assert (
        app_client.post(f"/v1/conversations/{cid}/messages", json=text_with_nul).status_code == 201
    )
    answer = app_client.get(
        f"/v1/conversations/{cid}/context",
        params={
            "strategy": "sliding_window",
            "force_filter": "true",
            "options": '{"window_size": 20}',
        },
    ).json()
    check_openai_invariants(answer["messages"][:-1], history, system_prompt="sys")
    assert answer["messages"][-1]["content"] == "a\x00b"
    assert app_client.delete(f"/v1/conversations/{cid}").status_code == 204


def test_insert_survives_a_broker_outage(app_client: Any, make_stack: Any) -> None:
    """Rows are committed first; a compaction that cannot be enqueued fails its job, saying
    so, and the route still answers 201 (the beat sweep retries later)."""
    make_stack(
        REDIS_URL="redis://127.0.0.1:9/0",
        HISTORY_COMPACTION_MAX_TOKENS="200",
        HISTORY_COMPACTION_TARGET_TOKENS="100",
    )
    cid = _conv(app_client)["id"]
    batch = [{"role": "user", "content": "word " * 100}] * 3
    r = app_client.post(f"/v1/conversations/{cid}/messages", json={"messages": batch})
    assert r.status_code == 201, r.text
    job = app_client.get(f"/v1/jobs/{r.json()['compaction_job_id']}").json()
    assert job["status"] == "failed" and "could not enqueue" in job["error"]
    assert app_client.get(f"/v1/conversations/{cid}").json()["message_count"] == 3


def _queued(redis_url: str, queue: str) -> list[tuple[str, list[Any]]]:
    """(task name, args) of the messages waiting in a queue of the real broker."""
    import base64
    import json

    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        raw = client.lrange(queue, 0, -1)
    finally:
        client.close()
    out = []
    for item in reversed(raw):  # kombu LPUSHes: oldest last
        message = json.loads(item)
        args = json.loads(base64.b64decode(message["body"]))[0]
        out.append((message["headers"]["task"], args))
    return out


def test_sweep_picks_conversations_past_their_threshold_once(
    app_client: Any, make_stack: Any
) -> None:
    """The sweep as a plain function, publishing to the real broker (no worker here; the
    queue path is in tests/integration)."""
    from contextq.settings import get_settings
    from service.history import sweep_compactions
    from tests.api.history_data import agent_history

    stack = make_stack(HISTORY_COMPACTION_MAX_TOKENS="1000000", MAX_CONTEXT_TOKENS="20000")
    due = _conv(app_client, model="gpt-4o", context_threshold=0.1)["id"]  # due at 2 000
    calm = _conv(app_client, model="gpt-4o", context_threshold=0.9)["id"]  # due at 18 000
    for cid in (due, calm):
        r = app_client.post(
            f"/v1/conversations/{cid}/messages", json={"messages": agent_history(150, pinned=0)}
        )
        assert r.status_code == 201 and "compaction_job_id" not in r.json()
    result = sweep_compactions(settings=get_settings())
    sent = _queued(stack.redis_url, "history")
    assert result["enqueued"] == [due] and [args[0] for _, args in sent] == [due]
    assert sent[0][0] == "contextq.compact_conversation"
    job = app_client.get(f"/v1/jobs/{sent[0][1][1]}").json()
    assert job["status"] == "queued" and job["kind"] == "compact_conversation"
    again = sweep_compactions(settings=get_settings())
    assert again["enqueued"] == [] and len(_queued(stack.redis_url, "history")) == 1  # still queued


def test_list_conversations_newest_first_in_pages(app_client: Any, make_owner: Any) -> None:
    made = [_conv(app_client, title=f"c{i}")["id"] for i in range(5)]
    first = app_client.get("/v1/conversations", params={"limit": 3}).json()
    assert [c["id"] for c in first["data"]] == made[::-1][:3]
    assert first["data"][0]["title"] == "c4" and first["next_cursor"]
    rest = app_client.get(
        "/v1/conversations", params={"limit": 3, "cursor": first["next_cursor"]}
    ).json()
    assert [c["id"] for c in rest["data"]] == made[::-1][3:]
    assert rest["next_cursor"] is None
    other = make_owner("someone-else")
    foreign = app_client.get("/v1/conversations", headers=other.headers).json()
    assert foreign == {"data": [], "next_cursor": None}


def test_list_conversations_bad_cursor_is_422(app_client: Any) -> None:
    r = app_client.get("/v1/conversations", params={"cursor": "not a cursor"})
    assert r.status_code == 422 and "cursor" in r.text
