"""Bound reasoning in a long tool loop (docs/context.md#bound-reasoning, issue 27): section 5 of
bench/context.py.

One user message, then a 200-step tool loop posted natively in Anthropic's shape, every
step thinking (a thinking block with its signature) and calling a tool whose result is
about 400 tokens; a custom agent prompt and a reminder set. The context is read after
every step (`format=anthropic`), as an agent would, on a model that binds its thinking
to the prefix (claude-opus-5-5) and, as the baseline in the same run, on one that does
not (claude-opus-4-7). Both windows are capped at the same size (`MAX_CONTEXT_TOKENS`,
own API process) so that the loop passes the budget, and the hard room, several times.

Figures, per model: the share of reads whose newest step's thinking is sent (target
>= 80 %), binding violations (a block sent after another prefix than the answer its
step read, a gap, a block put back: recomputed from the answers as a user would,
target 0), the share of reads whose answer only grew (the whole previous answer, cache
marks and thinking aside, is its start), prefix kept (the previous answer but its last
message, >= 80 %), steps kept on average, reads over the budget, and p50 read time.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.history_http import _free_port, _pct, _prepare, _start_api, _stop

WINDOW = 40_000
MODELS = ("claude-opus-5-5", "claude-opus-4-7")  # binds; does not bind
SIG = "EqQBCkYIBxgCKkB" + "a" * 40
PAD = " ".join(f"line{i} = value{i}" for i in range(115))  # about 400 tokens


def _canonical(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _canonical(v) for k, v in node.items() if k != "cache_control"}
    if isinstance(node, list):
        return [_canonical(v) for v in node if not _thinking(v)]
    return node


def _thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking")


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def _wire(answer: dict[str, Any]) -> list[Any]:
    return _canonical([answer["system"], answer["tools"], answer["messages"]])


def _sent(answer: dict[str, Any]) -> list[tuple[str, str]]:
    messages = answer["messages"]
    head = _canonical([answer["system"], answer["tools"]])
    out = []
    for k, message in enumerate(messages):
        for block in message["content"]:
            if _thinking(block):
                out.append((block["signature"], _hash([*head, _canonical(messages[:k])])))
    return out


def _step(client: Any, cid: str, n: int) -> None:
    batch = [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"step {n}: next file", "signature": f"{SIG}{n}"},
                {"type": "tool_use", "id": f"toolu_{n}", "name": "read_file", "input": {"n": n}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": PAD}],
        },
    ]
    body = {"format": "anthropic", "messages": batch}
    client.post(f"/v1/conversations/{cid}/messages", json=body).raise_for_status()


def _loop(client: Any, model: str, steps: int) -> dict[str, Any]:
    body = {
        "model": model,
        "custom_agent_prompt": "You are the repository agent.",
        "reminders": ["Run the tests before you answer."],
    }
    cid = client.post("/v1/conversations", json=body).raise_for_status().json()["id"]
    client.post(
        f"/v1/conversations/{cid}/messages", json={"role": "user", "content": "Fix the bug."}
    ).raise_for_status()
    url = f"/v1/conversations/{cid}/context"
    params = {"model": model, "format": "anthropic"}
    answers, times = [client.get(url, params=params).raise_for_status().json()], []
    for n in range(1, steps + 1):
        _step(client, cid, n)
        started = time.perf_counter()
        answers.append(client.get(url, params=params).raise_for_status().json())
        times.append((time.perf_counter() - started) * 1000)
    return _figures(answers, times)


def _figures(answers: list[dict[str, Any]], times: list[float]) -> dict[str, Any]:
    wrote: dict[str, str] = {}
    gone: set[str] = set()
    previous: list[str] = []
    violations = newest = grew = kept_prefix = over = 0
    for k, answer in enumerate(answers):
        if k:
            wrote[f"{SIG}{k}"] = _hash(_wire(answers[k - 1]))
        sent = _sent(answer)
        names = [s for s, _ in sent]
        violations += sum(1 for s, before in sent if before != wrote.get(s))
        violations += len(gone & set(names))
        still = [s for s in previous if s in names]
        if still:
            start = previous.index(still[0])
            violations += previous[start : start + len(still)] != still
        gone |= set(previous) - set(names)
        previous = names
        over += answer["token_count"] > answer["budget_tokens"]
        if not k:
            continue
        newest += f"{SIG}{k}" in names
        before, now = _wire(answers[k - 1]), _wire(answer)
        head = before[:2] == now[:2]
        grew += head and now[2][: len(before[2])] == before[2]
        kept_prefix += head and now[2][: len(before[2]) - 1] == before[2][:-1]
    reads = len(answers) - 1
    return {
        "newest": newest / reads,
        "violations": violations,
        "grew": grew / reads,
        "prefix": kept_prefix / reads,
        "steps_kept": statistics.fmean(a["kept_message_count"] / 2 for a in answers[1:]),
        "over_budget": over / len(answers),
        "dropped": sum(a["reasoning_dropped"]["prefix_changed"] for a in answers),
        "p50": _pct(times, 50),
        "budget": answers[-1]["budget_tokens"],
    }


def bound_section(redis_url: str | None, steps: int) -> dict[str, dict[str, Any]]:
    """Each model's loop on an API of its own, windows capped at `WINDOW`."""
    import httpx

    saved = dict(os.environ)
    data_dir = Path(tempfile.mkdtemp(prefix="contextq-bench-bound-"))
    os.environ["MAX_CONTEXT_TOKENS"] = str(WINDOW)
    proc = None
    try:
        key = _prepare(data_dir)
        port = _free_port()
        proc = _start_api(data_dir, port, data_dir / "api.log", redis_url)
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600
        ) as client:
            return {model: _loop(client, model, steps) for model in MODELS}
    finally:
        if proc is not None:
            _stop(proc)
        os.environ.clear()
        os.environ.update(saved)


def report_bound(rows: dict[str, dict[str, Any]], steps: int) -> None:
    print(f"\n5. Bound reasoning: a {steps}-step tool loop, window {WINDOW:,} tokens")
    print(
        f"   {'model':<17} {'newest sent':>11} {'violations':>10} {'grew':>6} {'prefix':>7}"
        f" {'steps kept':>10} {'over budget':>11} {'left out':>8} {'p50 ms':>7}"
    )
    for model, r in rows.items():
        print(
            f"   {model:<17} {r['newest']:>10.1%} {r['violations']:>10} {r['grew']:>6.1%}"
            f" {r['prefix']:>7.1%} {r['steps_kept']:>10.1f} {r['over_budget']:>11.1%}"
            f" {r['dropped']:>8} {r['p50']:>7.1f}"
        )
    bound = rows[MODELS[0]]
    ok = bound["newest"] >= 0.8 and bound["violations"] == 0 and bound["prefix"] >= 0.8
    verdict = "met" if ok else "MISSED"
    print(f"   targets (bound: newest >= 80 %, 0 violations, prefix >= 80 %): {verdict}")
