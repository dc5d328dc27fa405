"""Every resource of the SDK against the real app in process (FastAPI's TestClient is an
httpx client, so `Client(http_client=…)` drives it), over a real database and Valkey."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from contextq_client import (
    AsyncClient,
    Client,
    ConflictError,
    NotFoundError,
    RateLimitError,
    ValidationError,
    models,
)
from tests.support.api import in_process_client

BASE = "http://testserver"


@pytest.fixture
def sdk(stack: Any, owner: Any) -> Iterator[Client]:
    # the TestClient as a context manager runs the app's lifespan (its clients closed after)
    with in_process_client() as http, Client(BASE, api_key=owner.key, http_client=http) as client:
        yield client


def test_conversations_messages_and_pagination(sdk: Client) -> None:
    conv = sdk.conversations.create(title="t", model="gpt-4o", context_strategy="sliding_window")
    assert isinstance(conv, models.Conversation) and conv.message_count == 0
    assert sdk.conversations.update(conv.id, title="renamed").title == "renamed"
    first = sdk.messages.create(conv.id, role="user", content="hello")
    assert first.seq == 1 and first.token_count > 0
    batch = sdk.messages.append(
        conv.id, [{"role": "assistant", "content": f"answer {i}"} for i in range(4)]
    )
    assert [m.seq for m in batch.data] == [2, 3, 4, 5]
    page = sdk.messages.list(conv.id, limit=2)
    assert len(page.data) == 2 and page.next_cursor is not None
    contents = [m.content for m in sdk.messages.iter(conv.id, page_size=2)]
    assert contents == ["hello", "answer 0", "answer 1", "answer 2", "answer 3"]
    cited = sdk.messages.list(conv.id, seqs=[4, 2])  # what a summary's (#2, #4) names
    assert [(m.seq, m.content) for m in cited.data] == [(2, "answer 0"), (4, "answer 2")]
    with pytest.raises(ValidationError):
        sdk.messages.list(conv.id, seqs=[99])
    snapshot = sdk.memory.add_decision(conv.id, "use answer 0", seqs=[2])
    assert [d["decision"] for d in snapshot["decisions"]] == ["use answer 0"]
    exported = sdk.memory.export(conv.id)
    assert [2] in [d.get("seqs") for d in exported["decisions"]], exported
    assert sdk.messages.pin(conv.id, first.id).pinned is True
    assert sdk.conversations.get(conv.id).pinned_count == 1
    accepted = sdk.conversations.compact(conv.id)
    job = sdk.jobs.get(accepted.job_id)
    assert job.kind and job.status in ("queued", "running", "succeeded", "failed")
    assert isinstance(sdk.conversations.compactions(conv.id).data, list)
    sdk.conversations.delete(conv.id)
    with pytest.raises(NotFoundError) as err:
        sdk.conversations.get(conv.id)
    assert err.value.status_code == 404 and "not found" in str(err.value.detail)


def test_context_is_typed(sdk: Client) -> None:
    conv = sdk.conversations.create(model="gpt-4o")
    sdk.messages.create(conv.id, role="user", content="What is 2 + 2?")
    context = sdk.context.get(conv.id, model="gpt-4o", strategy="noop", skip_filter=True)
    assert context.messages[-1] == {"role": "user", "content": "What is 2 + 2?"}
    assert context.token_count == sum(context.token_breakdown.model_dump().values())
    assert context.context_limit > context.budget_tokens > 0
    anthropic = sdk.context.get(conv.id, model="claude-sonnet-4-5", format="anthropic")
    assert anthropic.system and anthropic.messages[0]["role"] == "user"


def test_memory_routes(sdk: Client) -> None:
    conv = sdk.conversations.create(model="gpt-4o", context_strategy="hierarchical")
    goal = sdk.memory.set_goal(conv.id, "ship the SDK", subtasks=["write", "test"])
    assert "ship the SDK" in str(goal)
    sdk.memory.set_phase(conv.id, "testing")
    sdk.memory.add_decision(conv.id, "use httpx", rationale="async and sync", impact="high")
    assert sdk.memory.add_action(conv.id, action_type="tool_call", content="ran pytest")
    for _ in range(3):
        tracked = sdk.memory.track_error(conv.id, "ImportError: no module named x")
    assert tracked["count"] == 3 and tracked["alert"]
    sdk.memory.complete_subtask(conv.id, "write")
    assert "use httpx" in sdk.memory.context(conv.id).context
    assert sdk.memory.stats(conv.id)
    exported = sdk.memory.export(conv.id)
    sdk.memory.reset(conv.id)
    assert "use httpx" not in sdk.memory.context(conv.id).context
    sdk.memory.import_(conv.id, exported)
    assert "use httpx" in sdk.memory.context(conv.id).context
    assert sdk.memory.get(conv.id)


def test_projects_workspace_settings_webhooks(sdk: Client, make_stack: Any) -> None:
    project = sdk.projects.create("docs", instructions="Answer from the docs.")
    assert sdk.projects.get(project.id).instructions == "Answer from the docs."
    assert sdk.projects.update(project.id, name="manuals").name == "manuals"
    assert project.id in [p.id for p in sdk.projects.iter(page_size=1)]
    assert sdk.projects.search(project.id, "anything").data == []
    assert sdk.projects.search(project.id, "anything", mode="dense").data == []
    with pytest.raises(ValidationError) as refused:
        sdk.projects.search(project.id, "anything", mode="fuzzy")  # type: ignore[arg-type]
    assert "mode" in str(refused.value.detail)
    uploaded = sdk.files.upload(b"a,b\n1,2\n", filename="t.csv")
    assert uploaded.status == "uploaded" and not uploaded.done
    assert sdk.files.update(uploaded.id, project_id=project.id).project_id == project.id
    assert [f.id for f in sdk.files.iter(project_id=project.id)] == [uploaded.id]
    with pytest.raises(ConflictError):
        sdk.files.content(uploaded.id)  # not processed: no worker here
    sdk.files.delete(uploaded.id)
    sdk.projects.delete(project.id)

    conv = sdk.conversations.create(model="gpt-4o")
    entry = sdk.workspace.put(conv.id, "notes/a b.txt", b"line 1\nline 2\n")
    assert entry.path == "notes/a b.txt" and entry.size_bytes == 14
    assert sdk.workspace.read(conv.id, "notes/a b.txt") == b"line 1\nline 2\n"
    sdk.workspace.put(conv.id, "notes/c.txt", b"c")
    assert [e.path for e in sdk.workspace.iter(conv.id, prefix="notes/", page_size=1)] == [
        "notes/a b.txt",
        "notes/c.txt",
    ]
    with pytest.raises(ConflictError):
        sdk.workspace.processed(conv.id, "notes/c.txt")
    sdk.workspace.delete(conv.id, "notes/c.txt")
    assert len(sdk.workspace.list(conv.id).data) == 1

    assert sdk.settings.update(system_prompt="Be brief.").system_prompt == "Be brief."
    assert sdk.settings.get().default_system_prompt

    make_stack(WEBHOOK_ALLOWED_HOSTS="127.0.0.1")
    key = sdk._t.http.headers["authorization"].removeprefix("Bearer ")
    with in_process_client() as http, Client(BASE, api_key=key, http_client=http) as fresh:
        hook = fresh.webhooks.create("http://127.0.0.1:9/hook", ["file.ready"])
        assert hook.secret.startswith("whsec_")
        assert [h.id for h in fresh.webhooks.list().data] == [hook.id]
        assert fresh.webhooks.get(hook.id).url == "http://127.0.0.1:9/hook"
        assert list(fresh.webhooks.iter_deliveries(hook.id)) == []
        fresh.webhooks.delete(hook.id)


def test_errors_carry_the_detail(sdk: Client) -> None:
    with pytest.raises(ValidationError) as err:
        sdk.conversations.create(context_threshold=5)
    assert err.value.status_code == 422
    assert any("context_threshold" in str(item.get("loc")) for item in err.value.detail)
    assert "context_threshold" in str(err.value)
    with pytest.raises(NotFoundError):
        sdk.files.get("missing")


def test_rate_limit_refusal_after_retries(make_stack: Any, owner: Any) -> None:
    make_stack(RATE_LIMIT_PER_MINUTE="2")
    calls: list[float] = []

    def count(request: httpx.Request) -> None:
        calls.append(time.monotonic())

    with (
        in_process_client() as http,
        Client(BASE, api_key=owner.key, http_client=http, max_retries=2, max_retry_wait=0.2) as c,
    ):
        http.event_hooks["request"].append(count)
        c.settings.get()
        c.settings.get()
        with pytest.raises(RateLimitError) as err:
            c.settings.get()
    assert len(calls) == 5, "the refused request was tried three times"
    assert calls[-1] - calls[-3] >= 0.4, "each retry waited (Retry-After, capped at 0.2 s)"
    assert err.value.retry_after and err.value.retry_after > 0
    assert "RATE_LIMIT_PER_MINUTE" in str(err.value.detail)


def test_async_client_in_process(stack: Any, owner: Any) -> None:
    from api.main import create_app

    async def scenario() -> list[str]:
        transport = httpx.ASGITransport(app=create_app())
        http = httpx.AsyncClient(transport=transport)
        async with AsyncClient(BASE, api_key=owner.key, http_client=http) as client:
            conv = await client.conversations.create(model="gpt-4o")
            await client.messages.append(
                conv.id, [{"role": "user", "content": str(i)} for i in range(5)]
            )
            kwargs = await client.chat_kwargs(conv.id, model="gpt-4o")
            assert kwargs["messages"][-1]["content"] == "4"
            return [str(m.content) async for m in client.messages.iter(conv.id, page_size=2)]

    assert asyncio.run(scenario()) == ["0", "1", "2", "3", "4"]
