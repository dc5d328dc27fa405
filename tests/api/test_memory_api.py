"""Seed 001's ContextManager over HTTP, in-process (FastAPI TestClient over a migrated
SQLite DATA_DIR): each memory route against the seed's examples, `impact` as an enum,
`memory_options` (validation and effect), reset, export/import, and the private-data
checkpoint (docs/workspaces.md)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from contextq.tokens import count_tokens
from service.history.checkpoint import flush_checkpoints

CONVERSATIONS = "/v1/conversations"
BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def _conv(client: Any, **body: Any) -> str:
    r = client.post(CONVERSATIONS, json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _mem(cid: str, path: str = "") -> str:
    return f"{CONVERSATIONS}/{cid}/memory{path}"


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


def _fields(response: Any) -> list[str]:
    assert response.status_code == 422, response.text
    return [".".join(str(p) for p in e["loc"]) for e in response.json()["detail"]]


def _action(client: Any, cid: str, action_type: str, content: str, **more: Any) -> Any:
    body = {"action_type": action_type, "content": content, **more}
    return _ok(client.post(_mem(cid, "/actions"), json=body), 201)


def test_fifteen_actions_compress_past_the_ratio(app_client: Any) -> None:
    """Seed 001's example: defaults 10 / 8000 / 0.7, fifteen routine tool actions."""
    cid = _conv(app_client)
    answers = [
        _action(app_client, cid, "tool_call", f"Executed command {i}", metadata={"tool": "bash"})
        for i in range(15)
    ]
    assert [a["action"]["id"] for a in answers] == list(range(1, 16))
    assert answers[0]["action"]["tool"] == "bash" and answers[0]["action"]["success"] is True
    # limit 0.7 x 10 = 7: the 8th action compresses (the newest 5 kept), the 11th and 14th
    events = [a["stats"]["compression_events"] for a in answers]
    assert events == [0] * 7 + [1] * 3 + [2] * 3 + [3] * 2
    stats = _ok(app_client.get(_mem(cid, "/stats")))
    assert stats["total_actions"] == 15
    assert stats["working_memory_size"] == 6
    assert stats["compression_events"] == 3
    assert stats["iterations_completed"] == 15
    context = _ok(app_client.get(_mem(cid, "/context")))["context"]
    assert "PREVIOUS ACTIONS: Executed 9 tools (9 successful)" in context
    assert context.index("PREVIOUS ACTIONS") < context.index("RECENT ACTIONS")
    assert "bash: Executed command 14" in context and "Executed command 8" not in context
    assert stats["token_utilisation"] == round(count_tokens(context) / 8000, 4)


def test_seed_example_recent_actions_are_the_last_five(app_client: Any) -> None:
    """Issue 17 item 6 through the API: seed 001's own 15 actions (max_working_memory 10,
    compression_threshold 0.7): RECENT ACTIONS ends with the last five, the critical
    actions before them; PREVIOUS ACTIONS is the compressed rest."""
    from tests.engine.history.test_memory_seed import SEED_EXAMPLE, SEED_LAST_FIVE, recent_section

    options = {"max_working_memory": 10, "compression_threshold": 0.7}
    cid = _conv(app_client, memory_options=options)
    for kind, content, success, metadata in SEED_EXAMPLE:
        _action(app_client, cid, kind, content, success=success, metadata=metadata)
    context = _ok(app_client.get(_mem(cid, "/context")))["context"]
    kept = ["Decision: Use PostgreSQL", "Error: Connection failed", "Decision: Add retry logic"]
    kept += SEED_LAST_FIVE
    assert recent_section(context, kept) == kept
    assert "PREVIOUS ACTIONS: Executed 6 tools (6 successful); Read 3 files" in context
    assert "Read file auth.py" not in context  # folded into the counters
    stats = _ok(app_client.get(_mem(cid, "/stats")))
    assert (stats["working_memory_size"], stats["decisions_made"]) == (8, 2)


def test_actions_are_checked(app_client: Any) -> None:
    cid = _conv(app_client)
    bad = [
        ({"action_type": "dance", "content": "x"}, "body.action_type"),
        ({"action_type": "observation", "metadata": [1]}, "body.metadata"),
        ({"action_type": "observation", "metadata": {"x": "y" * 5000}}, "body.metadata"),
        ({"action_type": "observation", "success": "maybe"}, "body.success"),
        ({"content": "no type"}, "body.action_type"),
    ]
    for body, field in bad:
        assert field in _fields(app_client.post(_mem(cid, "/actions"), json=body)), body
    assert _ok(app_client.get(_mem(cid, "/stats")))["total_actions"] == 0


def test_error_pattern_alert_at_the_third_repeat(app_client: Any) -> None:
    cid = _conv(app_client)
    said = [
        "Connection timeout after 30s on port 8080",
        "connection TIMEOUT after 45s on port 8081",
        "Connection timeout after 5s on port 80",
    ]
    entries = [_ok(app_client.post(_mem(cid, "/errors"), json={"error": e})) for e in said]
    assert {e["pattern"] for e in entries} == {"connection timeout after Ns on port N"}
    assert [(e["count"], e["alert"]) for e in entries] == [(1, False), (2, False), (3, True)]
    assert _ok(app_client.get(_mem(cid, "/stats")))["error_alerts"] == 1
    context = _ok(app_client.get(_mem(cid, "/context")))["context"]
    assert "connection timeout after Ns on port N (x3) ALERT" in context
    snapshot = _ok(app_client.get(_mem(cid)))
    assert snapshot["error_patterns"][0]["alert"] is True
    assert "error" in _fields(app_client.post(_mem(cid, "/errors"), json={"error": ""}))[0]


def test_error_messages_feed_the_same_patterns(app_client: Any) -> None:
    """Messages of kind `error` count like POST …/memory/errors."""
    cid = _conv(app_client)
    for port in (5432, 5433, 6543):
        _ok(
            app_client.post(
                f"{CONVERSATIONS}/{cid}/messages",
                json={
                    "role": "assistant",
                    "kind": "error",
                    "content": f"psycopg.OperationalError: connection refused on port {port}",
                },
            ),
            201,
        )
    patterns = _ok(app_client.get(_mem(cid)))["error_patterns"]
    assert [(p["count"], p["alert"]) for p in patterns] == [(3, True)]
    assert _ok(app_client.get(_mem(cid, "/stats")))["error_alerts"] == 1


def test_subtask_progress(app_client: Any) -> None:
    cid = _conv(app_client)
    subtasks = ["design schema", "write endpoints", "add tests"]
    goal = {"text": "Implement auth", "subtasks": subtasks}
    assert _ok(app_client.put(_mem(cid, "/goal"), json=goal))["goal"]["progress"] == 0
    progress = [
        _ok(app_client.post(_mem(cid, f"/subtasks/{name}/complete")))["goal"]["progress"]
        for name in subtasks[:2]
    ]
    assert progress == [0.3333, 0.6667]
    context = _ok(app_client.get(_mem(cid, "/context")))["context"]
    assert context.startswith("GOAL: Implement auth (progress 2/3)")
    assert "[x] design schema" in context and "[ ] add tests" in context
    assert "name" in _fields(app_client.post(_mem(cid, "/subtasks/deploy/complete")))[0]
    done = _ok(app_client.post(_mem(cid, "/subtasks/add tests/complete")))
    assert done["goal"]["progress"] == 1.0
    assert all(t["done"] for t in done["goal"]["subtasks"])


def test_decision_impact_is_high_medium_or_low(app_client: Any) -> None:
    cid = _conv(app_client)
    url = _mem(cid, "/decisions")
    default = _ok(app_client.post(url, json={"decision": "Use Postgres"}), 201)
    assert default["decisions"][-1]["impact"] == "medium"
    shouted = _ok(app_client.post(url, json={"decision": "Drop Redis", "impact": "HIGH "}), 201)
    assert shouted["decisions"][-1]["impact"] == "high"
    low = _ok(app_client.post(url, json={"decision": "Rename", "impact": "low"}), 201)
    assert low["decisions"][-1]["impact"] == "low"
    for wrong in ("huge", "", 3, None):
        r = app_client.post(url, json={"decision": "Ship it", "impact": wrong})
        assert _fields(r) == ["body.impact"], wrong
        assert "high" in r.text and "medium" in r.text and "low" in r.text
    stats = _ok(app_client.get(_mem(cid, "/stats")))
    assert stats["decisions_made"] == 3
    context = _ok(app_client.get(_mem(cid, "/context")))["context"]
    assert "- Drop Redis (impact: high)" in context


def test_decision_messages_feed_the_trail(app_client: Any) -> None:
    cid = _conv(app_client)
    message = {"role": "assistant", "kind": "decision", "content": "Vendor the parser"}
    _ok(app_client.post(f"{CONVERSATIONS}/{cid}/messages", json=message), 201)
    decisions = _ok(app_client.get(_mem(cid)))["decisions"]
    assert [(d["decision"], d["impact"]) for d in decisions] == [("Vendor the parser", "medium")]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"compression_threshold": 7}, "memory_options.compression_threshold"),
        ({"compression_threshold": 0}, "memory_options.compression_threshold"),
        ({"compression_threshold": "0.7"}, "memory_options.compression_threshold"),
        ({"max_working_memory": 1}, "memory_options.max_working_memory"),
        ({"max_working_memory": 2.5}, "memory_options.max_working_memory"),
        ({"max_context_tokens": 10}, "memory_options.max_context_tokens"),
        ({"window": 3}, "memory_options.window"),
        ([1, 2], "memory_options"),
    ],
)
def test_memory_options_are_checked_on_create_and_patch(
    app_client: Any, options: Any, field: str
) -> None:
    r = app_client.post(CONVERSATIONS, json={"memory_options": options})
    assert any(f.endswith(field) for f in _fields(r)), r.text
    cid = _conv(app_client, memory_options={"max_working_memory": 12})
    r = app_client.patch(f"{CONVERSATIONS}/{cid}", json={"memory_options": options})
    assert any(f.endswith(field) for f in _fields(r)), r.text
    stored = _ok(app_client.get(f"{CONVERSATIONS}/{cid}"))["memory_options"]
    assert stored == {"max_working_memory": 12}


def test_memory_options_take_effect(app_client: Any) -> None:
    options = {"max_working_memory": 20, "compression_threshold": 0.5}
    cid = _conv(app_client, memory_options=options)
    assert _ok(app_client.get(f"{CONVERSATIONS}/{cid}"))["memory_options"] == options
    for i in range(10):
        _action(app_client, cid, "observation", f"o{i}", success=True)
    assert _ok(app_client.get(_mem(cid, "/stats")))["compression_events"] == 0  # 10 = 0.5 x 20
    eleventh = _action(app_client, cid, "observation", "o10", success=True)
    assert eleventh["stats"]["compression_events"] == 1
    assert eleventh["stats"]["working_memory_size"] == 5  # the seed's last five
    exported = _ok(app_client.get(_mem(cid, "/export")))
    assert exported["options"] == {**options, "max_context_tokens": 8000}
    # a lower limit applies at once: 5 actions held > 0.2 x 20 = 4
    r = app_client.patch(
        f"{CONVERSATIONS}/{cid}", json={"memory_options": {"compression_threshold": 0.2}}
    )
    _ok(r)
    stats = _ok(app_client.get(_mem(cid, "/stats")))
    assert stats["compression_events"] == 2 and stats["working_memory_size"] <= 4


def test_max_context_tokens_bounds_the_text_and_utilisation(app_client: Any) -> None:
    cid = _conv(app_client, memory_options={"max_context_tokens": 150})
    goal = {"text": "Migrate the billing service", "subtasks": ["schema", "data", "cutover"]}
    _ok(app_client.put(_mem(cid, "/goal"), json=goal))
    for i in range(40):
        body = {"decision": f"decision number {i} about the billing schema", "rationale": "needed"}
        _ok(app_client.post(_mem(cid, "/decisions"), json=body), 201)
    context = _ok(app_client.get(_mem(cid, "/context")))["context"]
    tokens = count_tokens(context)
    assert tokens <= 150 and "decision number 39" in context
    assert "earlier decisions not shown" in context
    stats = _ok(app_client.get(_mem(cid, "/stats")))
    assert stats["token_utilisation"] == round(tokens / 150, 4) and stats["decisions_made"] == 40
    # the whole trail is kept; only the text is cut
    assert len(_ok(app_client.get(_mem(cid)))["decisions"]) == 40


def test_settings_give_the_memory_defaults(app_client: Any, make_stack: Any) -> None:
    make_stack(MEMORY_MAX_WORKING_MEMORY="8", MEMORY_COMPRESSION_THRESHOLD="0.5")
    cid = _conv(app_client)
    for i in range(5):
        answer = _action(app_client, cid, "observation", f"o{i}", success=True)
    assert answer["stats"]["compression_events"] == 1  # 5 > 0.5 x 8
    own = _conv(app_client, memory_options={"max_working_memory": 20})  # limit 10
    for i in range(5):
        answer = _action(app_client, own, "observation", f"o{i}", success=True)
    assert answer["stats"]["compression_events"] == 0


def _busy_memory(client: Any, cid: str) -> None:
    goal = {"text": "Ship v1", "subtasks": ["parser", "docs"]}
    _ok(client.put(_mem(cid, "/goal"), json=goal))
    _ok(client.post(_mem(cid, "/subtasks/parser/complete")))
    _ok(client.put(_mem(cid, "/phase"), json={"phase": "testing"}))
    decision = {"decision": "Freeze the API", "rationale": "clients depend on it", "impact": "high"}
    _ok(client.post(_mem(cid, "/decisions"), json=decision), 201)
    for i in range(9):
        _action(
            client,
            cid,
            "tool_call",
            f"pytest -k case{i}",
            success=i % 3 != 0,
            metadata={"tool": "bash", "path": f"tests/test_{i}.py"},
        )
    for port in (1, 2, 3):
        _ok(client.post(_mem(cid, "/errors"), json={"error": f"Timeout on port {port}"}))
    messages = [
        {"role": "user", "content": "Please also check the docs build."},
        {"role": "assistant", "kind": "decision", "content": "Build docs with mkdocs"},
    ]
    _ok(client.post(f"{CONVERSATIONS}/{cid}/messages", json={"messages": messages}), 201)


@BOTH_BACKENDS
def test_export_import_round_trip(stack: Any, app_client: Any) -> None:
    source = _conv(app_client, memory_options={"max_working_memory": 6})
    _busy_memory(app_client, source)
    exported = _ok(app_client.get(_mem(source, "/export")))
    snapshot = _ok(app_client.get(_mem(source)))
    context = _ok(app_client.get(_mem(source, "/context")))
    # into another conversation, whose own options differ: the memory comes back exactly
    target = _conv(app_client)
    imported = _ok(app_client.post(_mem(target, "/import"), json=exported))
    assert imported == snapshot
    assert _ok(app_client.get(_mem(target, "/export"))) == exported
    assert _ok(app_client.get(_mem(target, "/context"))) == context
    target_row = _ok(app_client.get(f"{CONVERSATIONS}/{target}"))
    assert target_row["memory_options"] == exported["options"]
    # and into the same conversation after a reset
    assert app_client.delete(_mem(source)).status_code == 204
    assert _ok(app_client.get(_mem(source, "/export"))) != exported
    _ok(app_client.post(_mem(source, "/import"), json=exported))
    assert _ok(app_client.get(_mem(source, "/export"))) == exported
    # the imported memory goes on as the original would
    after = _action(app_client, target, "reasoning", "next step")
    assert after["action"]["id"] == exported["next_id"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["decisions"][0].update(impact="huge"), "memory.decisions.0.impact"),
        (lambda d: d["options"].update(compression_threshold=3), "memory.options"),
        (lambda d: d["working"][0].update(kind="dance"), "memory.working.0.kind"),
        (lambda d: d.pop("goal"), "memory.goal"),
        (lambda d: d.update(version=7), "memory.version"),
        (lambda d: d.update(next_id=1), "memory.next_id"),
    ],
)
def test_import_refuses_a_bad_document_and_keeps_the_memory(
    app_client: Any, change: Any, field: str
) -> None:
    cid = _conv(app_client)
    _busy_memory(app_client, cid)
    before = _ok(app_client.get(_mem(cid, "/export")))
    document = json.loads(json.dumps(before))
    change(document)
    r = app_client.post(_mem(cid, "/import"), json=document)
    fields = _fields(r)
    assert any(f.startswith(f"body.{field}") for f in fields), fields
    assert _ok(app_client.get(_mem(cid, "/export"))) == before
    assert _fields(app_client.post(_mem(cid, "/import"), json=[1])) == ["body"]


def test_reset_forgets_everything_but_the_options(app_client: Any) -> None:
    cid = _conv(app_client, memory_options={"max_working_memory": 6})
    _busy_memory(app_client, cid)
    assert app_client.delete(_mem(cid)).status_code == 204
    stats = _ok(app_client.get(_mem(cid, "/stats")))
    assert stats == {
        "total_actions": 0,
        "working_memory_size": 0,
        "compression_events": 0,
        "decisions_made": 0,
        "token_utilisation": 0.0,
        "iterations_completed": 0,
        "error_alerts": 0,
    }
    assert _ok(app_client.get(_mem(cid, "/context"))) == {"context": ""}
    snapshot = _ok(app_client.get(_mem(cid)))
    assert snapshot["goal"] == {"text": None, "subtasks": [], "progress": 0.0}
    assert snapshot["decisions"] == [] and snapshot["error_patterns"] == []
    assert _ok(app_client.get(_mem(cid, "/export")))["options"]["max_working_memory"] == 6


# ---------------------------------------------------------------- private-data checkpoint


def _checkpoint(stack: Any, owner: Any, cid: str) -> Path:
    """The checkpoint's path, once the background writer has written what was committed."""
    assert flush_checkpoints()
    return Path(stack.data_dir) / "workspaces" / "_private-data" / owner.owner_id / f"{cid}.json"


def _saved(path: Path) -> Any:
    assert flush_checkpoints()
    return json.loads(path.read_text())


@BOTH_BACKENDS
def test_checkpoint_follows_every_change_and_goes_with_the_conversation(
    stack: Any, owner: Any, app_client: Any
) -> None:
    cid = _conv(app_client, title="demo", model="gpt-4o")
    path = _checkpoint(stack, owner, cid)
    first = json.loads(path.read_text())
    assert first["conversation"]["id"] == cid and first["conversation"]["title"] == "demo"
    assert first["conversation"]["model"] == "gpt-4o" and first["conversation"]["created_at"]
    assert first["memory"] == _ok(app_client.get(_mem(cid, "/export")))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700  # _private-data
    assert first["conversation"]["created_at"].endswith("+00:00")
    # never under the mountable tree DATA_DIR/workspaces/<owner_id>/
    mountable = Path(stack.data_dir) / "workspaces" / owner.owner_id
    assert not path.resolve().is_relative_to(mountable.resolve())
    changes = [
        lambda: app_client.put(_mem(cid, "/goal"), json={"text": "Ship", "subtasks": ["a"]}),
        lambda: app_client.post(_mem(cid, "/errors"), json={"error": "boom 1"}),
        lambda: app_client.post(_mem(cid, "/actions"), json={"action_type": "reasoning"}),
        lambda: app_client.post(
            f"{CONVERSATIONS}/{cid}/messages", json={"role": "user", "content": "go on"}
        ),
        lambda: app_client.delete(_mem(cid)),
    ]
    for change in changes:
        assert change().status_code < 300
        saved = _saved(path)
        assert saved["memory"] == _ok(app_client.get(_mem(cid, "/export")))
    _ok(app_client.patch(f"{CONVERSATIONS}/{cid}", json={"title": "renamed"}))
    assert _saved(path)["conversation"]["title"] == "renamed"
    assert list(path.parent.glob(".checkpoint-*")) == []  # no temp file left behind
    assert app_client.delete(f"{CONVERSATIONS}/{cid}").status_code == 204
    assert flush_checkpoints() and not path.exists()


def test_a_checkpoint_imports_back(stack: Any, owner: Any, app_client: Any) -> None:
    cid = _conv(app_client, title="before the crash")
    _busy_memory(app_client, cid)
    checkpoint = json.loads(_checkpoint(stack, owner, cid).read_text())
    exported = _ok(app_client.get(_mem(cid, "/export")))
    fresh = _conv(app_client)
    _ok(app_client.post(_mem(fresh, "/import"), json=checkpoint))
    assert _ok(app_client.get(_mem(fresh, "/export"))) == exported


def test_a_rejected_change_leaves_the_checkpoint_alone(
    stack: Any, owner: Any, app_client: Any
) -> None:
    cid = _conv(app_client)
    _busy_memory(app_client, cid)
    path = _checkpoint(stack, owner, cid)
    before = path.read_bytes()
    r = app_client.post(_mem(cid, "/subtasks/nope/complete"))
    assert r.status_code == 422
    assert flush_checkpoints() and path.read_bytes() == before


def test_memory_routes_answer_404_for_another_owner(app_client: Any, make_owner: Any) -> None:
    cid = _conv(app_client)
    headers = make_owner("mallory").headers
    calls = [
        ("GET", _mem(cid, "/context"), None),
        ("GET", _mem(cid, "/stats"), None),
        ("GET", _mem(cid, "/export"), None),
        ("POST", _mem(cid, "/import"), {"memory": {}}),
        ("POST", _mem(cid, "/actions"), {"action_type": "reasoning"}),
        ("POST", _mem(cid, "/errors"), {"error": "x"}),
        ("DELETE", _mem(cid), None),
    ]
    for method, url, body in calls:
        r = app_client.request(method, url, json=body, headers=headers)
        assert r.status_code == 404, (method, url, r.status_code, r.text)
        missing = app_client.request(method, url.replace(cid, "0" * 32), json=body)
        assert missing.status_code == 404, (method, url, missing.text)
    assert _ok(app_client.get(_mem(cid, "/stats")))["total_actions"] == 0


# ---------------------------------------------------------------- seed 004 provider names

SEED_004_LIMITS = {
    "azure-openai": 100_000,
    "openai": 100_000,
    "aws-bedrock": 150_000,
    "anthropic-claude": 150_000,
    "anthropic": 150_000,
    "google-gemini": 800_000,
    "gcp-vertexai": 150_000,
}


@pytest.mark.parametrize(("provider", "limit"), list(SEED_004_LIMITS.items()))
def test_each_provider_name_gives_its_limit_for_an_unknown_model(
    app_client: Any, make_stack: Any, provider: str, limit: int
) -> None:
    make_stack(LLM_PROVIDER=provider)
    cid = _conv(app_client, model="acme-internal-2024")
    _ok(
        app_client.post(f"{CONVERSATIONS}/{cid}/messages", json={"role": "user", "content": "hi"}),
        201,
    )
    answer = _ok(app_client.get(f"{CONVERSATIONS}/{cid}/context"))
    assert answer["context_limit"] == limit
    asked = _ok(app_client.get(f"{CONVERSATIONS}/{cid}/context", params={"model": "my-llm"}))
    assert asked["context_limit"] == limit
    # a model the catalogue knows keeps its own window, whatever the provider
    known = _ok(app_client.get(f"{CONVERSATIONS}/{cid}/context", params={"model": "gpt-4o"}))
    assert known["context_limit"] == 128_000
    # and MAX_CONTEXT_TOKENS caps every model
    make_stack(LLM_PROVIDER=provider, MAX_CONTEXT_TOKENS="50000")
    capped = _ok(app_client.get(f"{CONVERSATIONS}/{cid}/context"))
    assert capped["context_limit"] == 50_000


def test_an_unknown_provider_name_is_refused_at_start() -> None:
    from pydantic import ValidationError

    from contextq.settings import Settings

    with pytest.raises(ValidationError) as err:
        Settings(LLM_PROVIDER="azure")
    assert "azure-openai" in str(err.value)


def test_memory_options_reach_the_hierarchical_context(app_client: Any) -> None:
    """The context build's hierarchical strategy gets the memory with its options."""
    steps = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"step {i} of the port"}
        for i in range(6)
    ]
    params = {"strategy": "hierarchical", "force_filter": "true"}

    def memory_block(**conversation: Any) -> str:
        cid = _conv(app_client, **conversation)
        url = f"{CONVERSATIONS}/{cid}/messages"
        _ok(app_client.post(url, json={"messages": steps}), 201)
        answer = _ok(app_client.get(f"{CONVERSATIONS}/{cid}/context", params=params))
        blocks = [m["content"] for m in answer["messages"] if "RECENT ACTIONS:" in m["content"]]
        assert len(blocks) == 1, answer["messages"]
        assert blocks[0] in _ok(app_client.get(_mem(cid, "/context")))["context"]
        return str(blocks[0])

    assert "PREVIOUS ACTIONS" not in memory_block()  # 6 actions: under 0.7 x 10
    small = memory_block(memory_options={"max_working_memory": 4, "compression_threshold": 1.0})
    # limit 4, the newest 3 kept at a compression (one below the limit)
    assert small == (
        "PREVIOUS ACTIONS: 1 reasoning step; 1 user prompt\n\nRECENT ACTIONS:\n"
        "- [user_prompt] step 2 of the port\n- [reasoning] step 3 of the port\n"
        "- [user_prompt] step 4 of the port\n- [reasoning] step 5 of the port"
    )


def test_concurrent_changes_leave_the_newest_state_in_the_checkpoint(
    stack: Any, owner: Any, app_client: Any
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    cid = _conv(app_client)

    def act(i: int) -> int:
        body = {"action_type": "observation", "content": f"o{i}", "success": True}
        return int(app_client.post(_mem(cid, "/actions"), json=body).status_code)

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(act, range(80))) == {201}
    saved = _saved(_checkpoint(stack, owner, cid))
    exported = _ok(app_client.get(_mem(cid, "/export")))
    assert exported["total_actions"] == 80 and saved["memory"] == exported


def test_the_phase_weighs_the_importance_of_later_actions(app_client: Any) -> None:
    cid = _conv(app_client)
    calm = _action(app_client, cid, "error", "KeyError: 'amount'", success=None)
    _ok(app_client.put(_mem(cid, "/phase"), json={"phase": "Debugging the importer"}))
    debugging = _action(app_client, cid, "observation", "row 12 has no amount", success=None)
    assert (calm["action"]["importance"], debugging["action"]["importance"]) == (0.8, 0.5)
    _ok(app_client.put(_mem(cid, "/phase"), json={"phase": "planning"}))
    planning = _action(app_client, cid, "reasoning", "split the reader first", success=None)
    assert planning["action"]["importance"] == 0.8  # 0.7 + 0.1 while planning
