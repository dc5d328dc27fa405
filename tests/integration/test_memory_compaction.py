"""Compaction with the conversation's memory, through the real queue: a real Valkey, real
`celery worker` / `celery beat` subprocesses, the API under uvicorn and a real SQLite file.

- `ENABLE_AUTO_COMPRESSION=false`: no compaction from the insert trigger or the beat
  sweep, while `POST …/compact` still compacts.
- The retention check repairs a summary from an OpenAI-compatible endpoint (a local fake:
  the one part a user would not run) that drops the goal and a decision; `retention`
  and `repaired` show in `GET …/compactions`.
- A fifth successive compaction still holds the goal, the open subtasks, every decision
  and the recurring error.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from store.history_tables import Compaction
from tests.support.db import all_rows
from tests.support.procs import wait_until

pytestmark = pytest.mark.integration

GOAL = "Port the invoice importer to asyncio"
SUBTASKS = ["reproduce the stall", "rewrite the reader", "update the docs"]
DROPPED_DECISION = "Pin pydantic below version 3"
KEPT_DECISION = "Keep the CSV dialect sniffing"
IMPORT_ERRORS = [
    "ImportError: cannot import name 'Loader' from 'yaml' (attempt 1)",
    "ImportError: cannot import name 'Loader' from 'yaml' (attempt 2)",
    "ImportError: cannot import name 'Loader' from 'yaml' (attempt 3)",
]


def _conversation(client: Any, **body: Any) -> str:
    r = client.post("/v1/conversations", json={"system_prompt": "You are an agent.", **body})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _post(client: Any, url: str, body: Any, status: int = 200) -> Any:
    r = client.post(url, json=body)
    assert r.status_code == status, r.text
    return r.json()


def _wait_job(client: Any, job_id: str, timeout: float = 90.0) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        job = client.get(f"/v1/jobs/{job_id}").json()
        return job if job["status"] in ("succeeded", "failed") else None

    return wait_until(done, timeout=timeout, interval=0.1, what=f"job {job_id}")


def _compact(client: Any, cid: str) -> dict[str, Any]:
    job = _wait_job(client, _post(client, f"/v1/conversations/{cid}/compact", None, 202)["job_id"])
    assert job["status"] == "succeeded", job
    return job


def _round(n: int, steps: int = 40) -> list[dict[str, Any]]:
    """One stretch of agent work: prompts, tool calls and their results, reasoning."""
    out: list[dict[str, Any]] = []
    for i in range(steps):
        call = f"r{n}_c{i}"
        path = f"importer/stage_{n}_{i}.py"
        out += [
            {"role": "user", "content": f"Round {n} step {i}: look at {path} for the stall."},
            {
                "role": "assistant",
                "content": f"Reading {path}.",
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": call,
                "content": f"{path}: "
                + " ".join(f"line{j} await reader.next()" for j in range(12)),
            },
            {
                "role": "assistant",
                "content": f"Stage {n}.{i} reads rows one by one.",
                "kind": "reasoning",
            },
        ]
    return out


def _set_up_memory(client: Any, cid: str) -> None:
    base = f"/v1/conversations/{cid}/memory"
    r = client.put(f"{base}/goal", json={"text": GOAL, "subtasks": SUBTASKS})
    assert r.status_code == 200, r.text
    _post(client, f"{base}/subtasks/{SUBTASKS[0]}/complete", None)
    _post(client, f"{base}/decisions", {"decision": KEPT_DECISION, "rationale": "old files"}, 201)
    body = {"decision": DROPPED_DECISION, "rationale": "v3 breaks validators", "impact": "high"}
    _post(client, f"{base}/decisions", body, 201)
    errors = [{"role": "assistant", "kind": "error", "content": e} for e in IMPORT_ERRORS]
    _post(client, f"/v1/conversations/{cid}/messages", {"messages": errors}, 201)


# ---------------------------------------------------------------- ENABLE_AUTO_COMPRESSION


@pytest.mark.stack_env(
    ENABLE_AUTO_COMPRESSION="false",
    HISTORY_COMPACTION_MAX_TOKENS="3000",
    HISTORY_COMPACTION_TARGET_TOKENS="1500",
    MAX_CONTEXT_TOKENS="20000",
    COMPACTION_SWEEP_INTERVAL_S="1",
)
def test_auto_compression_off_means_no_automatic_compaction_but_compact_works(
    stack: Any, worker: Any, beat_factory: Any, client: Any
) -> None:
    cid = _conversation(client, context_threshold=0.1)  # due at 2 000 tokens for the sweep
    body = _post(client, f"/v1/conversations/{cid}/messages", {"messages": _round(1)}, 201)
    conversation = client.get(f"/v1/conversations/{cid}").json()
    assert conversation["tokens_since_compaction"] > 3000  # the insert crossed the trigger
    assert "compaction_job_id" not in body
    beat_factory()

    def disabled_sweeps() -> int | None:
        done = re.findall(r"sweep_compactions\[.*?\] succeeded.*disabled", worker.log())
        return len(done) if len(done) >= 3 else None

    assert wait_until(disabled_sweeps, timeout=60, interval=0.3, what="three sweeps by the beat")
    assert "ENABLE_AUTO_COMPRESSION=false" in worker.log()
    assert all_rows(Compaction, conversation_id=cid) == []
    assert client.get(f"/v1/conversations/{cid}/compactions").json()["data"] == []
    # forced compaction still works
    job = _compact(client, cid)
    assert job["result"]["method"] == "summary"
    rows = client.get(f"/v1/conversations/{cid}/compactions").json()["data"]
    assert [r["id"] for r in rows] == [job["result"]["compaction_id"]]
    time.sleep(2)  # more sweeps: still nothing automatic
    assert len(all_rows(Compaction, conversation_id=cid)) == 1


# ---------------------------------------------------------------- retention repair


class _ForgetfulSummaries(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint whose summaries copy the MEMORY
    block but drop the goal line and one decision."""

    requests: list[dict[str, Any]] = []  # noqa: RUF012

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length))
        type(self).requests.append(body)
        ask = body["messages"][-1]["content"]
        memory = ask.split("MEMORY (copy verbatim):\n", 1)[1].split("\n\nTRANSCRIPT:", 1)[0]
        kept = [
            line
            for line in memory.splitlines()
            if not line.startswith("Goal:") and DROPPED_DECISION not in line
        ]
        summary = "\n".join(
            [
                "Summary of the agent's work so far.",
                "## Goal and subtasks",
                *[line for line in kept if line.startswith(("Phase:", "Progress:", "- ["))],
                "## Decisions",
                *[line for line in kept if "(impact:" in line],
                "## Errors and recurring patterns",
                *[line for line in kept if line.startswith("- recurring")],
                "## Narrative",
                "The agent read the importer stage by stage.",
            ]
        )
        answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": summary}}]})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def forgetful_llm() -> Iterator[str]:
    _ForgetfulSummaries.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ForgetfulSummaries)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_retention_check_repairs_a_summary_that_dropped_the_goal_and_a_decision(
    stack: Any, make_stack: Any, worker_factory: Any, client: Any, forgetful_llm: str
) -> None:
    env = make_stack(
        SUMMARIZER="openai",
        OPENAI_BASE_URL=forgetful_llm,
        OPENAI_API_KEY="test",
        HISTORY_COMPACTION_TARGET_TOKENS="2000",
    )
    worker_factory(env)
    cid = _conversation(client, model="gpt-4o")
    _set_up_memory(client, cid)
    _post(client, f"/v1/conversations/{cid}/messages", {"messages": _round(1)}, 201)
    job = _compact(client, cid)
    # the endpoint was asked with the memory to copy, goal and decision included
    asked = _ForgetfulSummaries.requests[0]["messages"][-1]["content"]
    assert f"Goal: {GOAL}" in asked and DROPPED_DECISION in asked
    [row] = client.get(f"/v1/conversations/{cid}/compactions").json()["data"]
    assert row["method"] == "summary" and row["details"]["summarizer"] == "openai"
    # checked: the goal, 2 open subtasks, 2 decisions, 1 error pattern seen 3 times
    assert row["details"]["checked_items"] == 6
    assert row["retention"] == round(4 / 6, 4)
    assert row["repaired"] == [f"goal: {GOAL}", f"decision: {DROPPED_DECISION}"]
    assert (job["result"]["retention"], job["result"]["repaired"]) == (
        row["retention"],
        row["repaired"],
    )
    restored = row["summary"].split("## Restored from memory", 1)[1]
    assert f"Goal: {GOAL}" in restored
    assert f"- {DROPPED_DECISION} — why: v3 breaks validators (impact: high)" in restored
    assert KEPT_DECISION in row["summary"] and KEPT_DECISION not in restored
    # the context sends the repaired summary
    answer = client.get(f"/v1/conversations/{cid}/context").json()
    assert answer["compaction_id"] == row["id"]
    sent = "\n".join(str(m.get("content")) for m in answer["messages"])
    assert GOAL in sent and DROPPED_DECISION in sent


# ---------------------------------------------------------------- five compactions


@pytest.mark.stack_env(
    HISTORY_COMPACTION_MAX_TOKENS="1000000", HISTORY_COMPACTION_TARGET_TOKENS="2000"
)
def test_a_fifth_compaction_still_holds_goal_subtasks_decisions_and_the_recurring_error(
    stack: Any, worker: Any, client: Any
) -> None:
    cid = _conversation(client, model="gpt-4o")
    _set_up_memory(client, cid)
    decisions = [KEPT_DECISION, DROPPED_DECISION]
    jobs = []
    for n in range(1, 6):
        decision = f"Round {n}: batch rows by {n * 100} before awaiting"
        _post(
            client,
            f"/v1/conversations/{cid}/memory/decisions",
            {"decision": decision, "rationale": f"measured in round {n}", "impact": "low"},
            201,
        )
        decisions.append(decision)
        messages = _round(n)
        if n == 3:  # a decision recorded as a message feeds the trail too
            said = "Use aiofiles for the reader"
            messages.append({"role": "assistant", "kind": "decision", "content": said})
            decisions.append(said)
        _post(client, f"/v1/conversations/{cid}/messages", {"messages": messages}, 201)
        jobs.append(_compact(client, cid))
    rows = client.get(f"/v1/conversations/{cid}/compactions").json()["data"]
    assert len(rows) == 5 and all(r["method"] == "summary" for r in rows)
    fifth, fourth = rows[0], rows[1]
    assert fifth["id"] == jobs[-1]["result"]["compaction_id"]
    assert fifth["details"]["previous_compaction_id"] == fourth["id"]  # folded, incremental
    assert fifth["through_seq"] > fourth["through_seq"]
    summary = fifth["summary"]
    assert f"Goal: {GOAL}" in summary
    open_subtasks = SUBTASKS[1:]
    for name in open_subtasks:
        assert f"- [ ] {name}" in summary, name
    assert f"- [x] {SUBTASKS[0]}" in summary
    memory = client.get(f"/v1/conversations/{cid}/memory").json()
    assert [d["decision"] for d in memory["decisions"]] == decisions
    for decision in decisions:
        assert decision in summary, decision
    [recurring] = [p for p in memory["error_patterns"] if p["count"] >= 3]
    assert recurring["alert"] and f"ALERT: {recurring['pattern']}" in summary
    # every compaction was checked: nothing had to be appended to the memory's sections
    assert all(r["retention"] == 1.0 and r["repaired"] == [] for r in rows)
    assert fifth["details"]["checked_items"] == 1 + len(open_subtasks) + len(decisions) + 1
    # the fifth read the fourth summary plus what was new, not the whole history
    conversation = client.get(f"/v1/conversations/{cid}").json()
    assert fifth["original_message_count"] < conversation["message_count"] // 3
