"""Bound reasoning under concurrency (issue 27), through the real API: uvicorn with 4
worker processes over a real SQLite file, a tool loop on a model that binds its thinking
to the prefix (claude-opus-5-5, `format=anthropic`), and after each step 8 context reads
at once, each on its own connection. Every read of a step answers the same bytes —
which thinking is sent, where the reminder stands, the cut point —, also on the steps
where the budget forces the cut to move and thinking is left out, and the binding
state (the watermark, the answers' fingerprints) is the one they answered, written
once per step."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from store import context_queries as cq
from store.db import read_session
from tests.support.api import ApiServer, api_client
from tests.support.db import OwnerKey
from tests.support.stack import StackEnv

pytestmark = [
    pytest.mark.integration,
    pytest.mark.stack_env(MAX_CONTEXT_TOKENS="16000"),
]
MODEL = "claude-opus-5-5"
READS = 8
STEPS = 16  # past the hard room of a 16 000-token window: the cut moves inside the loop
PAD = " ".join(f"line{i} = value{i}" for i in range(120))
VOLATILE = ("duration_ms", "filter_duration_ms")


@pytest.fixture
def server(stack: StackEnv, tmp_path: Path, owner: OwnerKey) -> Iterator[tuple[str, str]]:
    api = ApiServer(stack, log_dir=tmp_path / "logs", workers=4).start()
    try:
        yield api.base_url, owner.key
    finally:
        api.stop()


def _step(client: Any, cid: str, n: int) -> None:
    batch = [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"step {n}", "signature": f"sig-{n}"},
                {"type": "tool_use", "id": f"toolu_{n}", "name": "read_file", "input": {"n": n}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}",
                                      "content": f"{n} {PAD}"}]},
    ]  # fmt: skip
    body = {"format": "anthropic", "messages": batch}
    client.post(f"/v1/conversations/{cid}/messages", json=body).raise_for_status()


def _burst(base_url: str, key: str, cid: str) -> list[bytes]:
    clients = [api_client(base_url, key, timeout=60) for _ in range(READS)]
    try:
        for c in clients:
            c.get("/healthz")
        gate = threading.Barrier(READS)

        def one(i: int) -> httpx.Response:
            gate.wait()
            params = {"model": MODEL, "format": "anthropic"}
            return clients[i].get(f"/v1/conversations/{cid}/context", params=params)

        with ThreadPoolExecutor(READS) as pool:
            responses = list(pool.map(one, range(READS)))
    finally:
        for c in clients:
            c.close()
    assert all(r.status_code == 200 for r in responses), [r.text[:300] for r in responses]
    return [
        orjson.dumps({k: v for k, v in r.json().items() if k not in VOLATILE}) for r in responses
    ]


def test_eight_reads_of_each_bound_step_agree(server: tuple[str, str], client: Any) -> None:
    base_url, key = server
    body = {"model": MODEL, "custom_agent_prompt": "You are the agent.", "reminders": ["Test."]}
    cid = client.post("/v1/conversations", json=body).raise_for_status().json()["id"]
    client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "Fix the bug."}
    ).raise_for_status()
    dropped_steps = 0
    for n in range(1, STEPS + 1):
        _step(client, cid, n)
        with read_session() as session:
            before = cq.get_carried(session, conversation_id=cid, model=MODEL).version
        bodies = _burst(base_url, key, cid)
        if len(set(bodies)) != 1:
            a, b = (orjson.loads(x) for x in list(dict.fromkeys(bodies))[:2])
            differ = {k: (a[k], b[k]) for k in a if a[k] != b[k] and k != "messages"}
            raise AssertionError(f"step {n}: the reads disagree: {differ}")
        answer = orjson.loads(bodies[0])
        with read_session() as session:
            stored = cq.get_carried(session, conversation_id=cid, model=MODEL)
        assert stored.version == (before or 0) + 1, f"step {n}: written more than once"
        newest = stored.binding["answers"][-1] if stored.binding else None
        assert newest is not None and newest[0] == n * 2 + 1  # this step's answer, stored
        if answer["reasoning_dropped"]["prefix_changed"]:
            dropped_steps += 1
            assert stored.reasoning_seq is not None  # the watermark they answered
            sent = [b for m in answer["messages"] for b in m["content"] if b["type"] == "thinking"]
            assert all(int(b["signature"][4:]) * 2 > stored.reasoning_seq for b in sent)
    assert dropped_steps, "the loop never moved its cut"
