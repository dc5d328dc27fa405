"""Compaction through the real queue: a real Valkey, real `celery worker` (and `celery
beat`) subprocesses, the API under uvicorn and a real SQLite file.

Covers: the trigger on insert, the on-demand POST /compact, the beat sweep, two
concurrent triggers producing exactly one compaction, and the context using the
summary afterwards (validated against the OpenAI and Anthropic SDK types).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from store.history_tables import Compaction
from tests.api.history_data import (
    agent_history,
    check_openai_invariants,
    marker_of,
    validate_with_sdks,
)
from tests.support.db import all_rows
from tests.support.procs import wait_until

pytestmark = pytest.mark.integration

SYSTEM = "You are a careful coding agent."


def _conversation(client: Any, **body: Any) -> str:
    r = client.post("/v1/conversations", json={"system_prompt": SYSTEM, **body})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _post_batch(client: Any, cid: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text
    return r.json()


def _wait_job(client: Any, job_id: str, timeout: float = 90.0) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        job = client.get(f"/v1/jobs/{job_id}").json()
        return job if job["status"] in ("succeeded", "failed") else None

    return wait_until(done, timeout=timeout, interval=0.1, what=f"job {job_id}")


@pytest.mark.stack_env(
    HISTORY_COMPACTION_MAX_TOKENS="20000", HISTORY_COMPACTION_TARGET_TOKENS="6000"
)
def test_import_2000_messages_triggers_compaction_and_context_uses_summary(
    stack: Any, worker: Any, client: Any
) -> None:
    history = agent_history(2000, pinned=4)
    cid = _conversation(client, model="gpt-4o")
    first = _post_batch(client, cid, history[:100])
    assert "compaction_job_id" not in first  # still under the threshold
    started = time.perf_counter()
    body = _post_batch(client, cid, history[100:])
    import_s = time.perf_counter() - started
    assert len(body["data"]) == len(history) - 100
    assert import_s < 30
    job_id = body["compaction_job_id"]  # the insert took it over HISTORY_COMPACTION_MAX_TOKENS
    job = _wait_job(client, job_id)
    assert job["status"] == "succeeded", job
    assert job["result"]["method"] == "summary"
    compactions = client.get(f"/v1/conversations/{cid}/compactions").json()["data"]
    assert [c["id"] for c in compactions] == [job["result"]["compaction_id"]]
    c = compactions[0]
    assert c["method"] == "summary" and c["summary"].strip()
    assert c["compacted_tokens"] < c["original_tokens"]
    assert c["original_message_count"] > 100 and c["through_seq"] < len(history)
    conv = client.get(f"/v1/conversations/{cid}").json()
    assert conv["last_compacted_seq"] == c["through_seq"]
    assert conv["tokens_since_compaction"] < 20000
    # the context now carries the summary in place of the covered messages
    answer = client.get(
        f"/v1/conversations/{cid}/context",
        params={"model": "gpt-4o", "options": json.dumps({"reserve_tokens": 500})},
    ).json()
    assert answer["compaction_id"] == c["id"]
    summaries = [m for m in answer["messages"] if "<conversation_summary>" in str(m.get("content"))]
    assert len(summaries) == 1 and c["summary"] in summaries[0]["content"]
    rest = [m for m in answer["messages"] if m not in summaries]
    check_openai_invariants(rest, history, system_prompt=SYSTEM)
    pinned_calls = {c["id"] for h in history if h.get("pinned") for c in h.get("tool_calls") or ()}
    for m in rest[1:]:  # covered messages are sent only when pinned, system or in a pinned chain
        i = marker_of(m)
        assert i is not None
        if i + 1 <= c["through_seq"]:
            h = history[i]
            assert h.get("pinned") or h["role"] == "system" or h.get("tool_call_id") in pinned_calls
    validate_with_sdks(answer)
    anthropic = client.get(
        f"/v1/conversations/{cid}/context", params={"format": "anthropic"}
    ).json()
    validate_with_sdks(anthropic)
    # originals are never altered
    page = client.get(f"/v1/conversations/{cid}/messages", params={"limit": 5}).json()["data"]
    assert [m["content"] for m in page] == [h["content"] for h in history[:5]]


def test_on_demand_compact_job_succeeds(stack: Any, worker: Any, client: Any) -> None:
    history = agent_history(600, pinned=2)
    cid = _conversation(client)
    _post_batch(client, cid, history)
    r = client.post(f"/v1/conversations/{cid}/compact")
    assert r.status_code == 202
    job = _wait_job(client, r.json()["job_id"])
    assert job["status"] == "succeeded" and job["kind"] == "compact_conversation", job
    assert job["finished_at"] is not None and job["error"] is None
    compactions = client.get(f"/v1/conversations/{cid}/compactions").json()["data"]
    assert len(compactions) == 1 and compactions[0]["id"] == job["result"]["compaction_id"]
    answer = client.get(f"/v1/conversations/{cid}/context").json()
    assert answer["compaction_id"] == compactions[0]["id"]
    _check_provenance(client, cid, compactions[0], job["result"])
    # nothing new: a second request compacts nothing and says so
    again = _wait_job(client, client.post(f"/v1/conversations/{cid}/compact").json()["job_id"])
    assert again["status"] == "succeeded" and "skipped" in again["result"], again
    assert len(all_rows(Compaction, conversation_id=cid)) == 1


def _check_provenance(
    client: Any, cid: str, compaction: dict[str, Any], result: dict[str, Any]
) -> None:
    """docs/provenance.md: every structured line cites its messages, and `?seqs=` gives them back
    holding the line's words."""
    from contextq.history.provenance import key_terms, summary_items

    items = summary_items(compaction["summary"])
    assert len(items) > 10
    assert compaction["unsourced_items"] == result["unsourced_items"] == 0
    assert result["structured_items"] == len(items)
    assert all(item.seqs for item in items), [i.line for i in items if not i.seqs]
    for item in items[:: max(1, len(items) // 8)]:
        seqs = ",".join(str(s) for s in item.seqs)
        r = client.get(f"/v1/conversations/{cid}/messages", params={"seqs": seqs})
        assert r.status_code == 200, r.text
        originals = r.json()["data"]
        assert [m["seq"] for m in originals] == sorted(item.seqs)
        for original in originals:
            text = json.dumps(original).lower()
            assert all(t in text for t in key_terms(item.content, numbers=False)), item.line


@pytest.mark.stack_env(
    HISTORY_COMPACTION_MAX_TOKENS="1000000",
    MAX_CONTEXT_TOKENS="20000",
    COMPACTION_SWEEP_INTERVAL_S="1",
)
def test_beat_sweep_compacts_conversations_past_their_threshold(
    stack: Any, worker: Any, beat_factory: Any, client: Any
) -> None:
    # threshold of this conversation: 20 000 x 0.1 = 2 000 tokens (the insert trigger at
    # 1 000 000 never fires), so only the sweep can compact it
    due = _conversation(client, model="gpt-4o", context_threshold=0.1)
    small = _conversation(client, model="gpt-4o", context_threshold=0.9)
    body = _post_batch(client, due, agent_history(200, pinned=1))
    assert "compaction_job_id" not in body
    _post_batch(client, small, agent_history(20, pinned=0))
    beat_factory()
    rows = wait_until(
        lambda: all_rows(Compaction, conversation_id=due),
        timeout=60,
        interval=0.2,
        what="a compaction by the beat sweep",
    )
    assert rows[0].method == "summary"
    time.sleep(3)  # three more sweeps: nothing new past the threshold, nothing more done
    assert len(all_rows(Compaction, conversation_id=due)) == 1
    assert all_rows(Compaction, conversation_id=small) == []
    answer = client.get(f"/v1/conversations/{due}/context").json()
    assert answer["compaction_id"] == rows[0].id


class _SlowSummaries(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint that takes its time."""

    delay_s = 3.0
    calls: list[float] = []  # noqa: RUF012

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        json.loads(self.rfile.read(length))
        type(self).calls.append(time.monotonic())
        time.sleep(self.delay_s)
        body = json.dumps(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": "SLOW-SUMMARY of the work so far.",
                        }
                    }
                ]
            }
        )
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def slow_llm() -> Iterator[str]:
    _SlowSummaries.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowSummaries)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_two_concurrent_triggers_produce_one_compaction(
    stack: Any, make_stack: Any, worker_factory: Any, client: Any, slow_llm: str
) -> None:
    env = make_stack(SUMMARIZER="openai", OPENAI_BASE_URL=slow_llm, OPENAI_API_KEY="test")
    worker_factory(env, concurrency=2)
    cid = _conversation(client)
    _post_batch(client, cid, agent_history(400, pinned=1))
    results: list[Any] = []
    barrier = threading.Barrier(2)

    def trigger() -> None:
        barrier.wait()
        results.append(client.post(f"/v1/conversations/{cid}/compact"))

    threads = [threading.Thread(target=trigger) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert [r.status_code for r in results] == [202, 202]
    jobs = [_wait_job(client, r.json()["job_id"]) for r in results]
    assert all(j["status"] == "succeeded" for j in jobs), jobs
    outcomes = sorted(json.dumps(j["result"], sort_keys=True) for j in jobs)
    skipped = [j for j in jobs if j["result"].get("skipped") == "already running"]
    assert len(skipped) == 1, outcomes
    rows = all_rows(Compaction, conversation_id=cid)
    assert len(rows) == 1 and rows[0].summary.startswith("SLOW-SUMMARY")
    assert len(_SlowSummaries.calls) == 1  # the loser never called the summariser


def test_two_sweeps_at_once_compact_each_conversation_once(
    stack: Any, make_stack: Any, worker_factory: Any, client: Any, slow_llm: str
) -> None:
    """Two beat instances firing together: the second sweep sees the queued job, and the
    lock catches whatever slips through."""
    from contextq.settings import get_settings
    from service.enqueue import producer

    env = make_stack(
        SUMMARIZER="openai",
        OPENAI_BASE_URL=slow_llm,
        OPENAI_API_KEY="test",
        HISTORY_COMPACTION_MAX_TOKENS="1000000",
        MAX_CONTEXT_TOKENS="20000",
    )
    worker_factory(env, concurrency=2)
    cid = _conversation(client, model="gpt-4o", context_threshold=0.1)
    _post_batch(client, cid, agent_history(200, pinned=0))
    app = producer(get_settings())
    sent = [app.send_task("contextq.sweep_compactions", queue="history") for _ in range(2)]
    outcomes = [r.get(timeout=60) for r in sent]
    assert sorted(len(o["enqueued"]) for o in outcomes) in ([0, 1], [1, 1])
    wait_until(
        lambda: all_rows(Compaction, conversation_id=cid),
        timeout=60,
        interval=0.2,
        what="the compaction",
    )
    time.sleep(1)
    assert len(all_rows(Compaction, conversation_id=cid)) == 1
