"""Issue 29 point 1 through the API (docs/context.md#clearing-old-tool-results-with-hysteresis):
clearing keeps more in view than dropping alone, on a small window too. After a move of the clearing
line the newest `keep_tool_results` pairs stay whole whenever they fit `budget_tokens`, the stubs of
the older ones fill the room they leave, and the cut's headroom comes out of what is older;
and the line moves when usage is over the threshold, not only past the budget (an agent
run on gpt-4o with `context_threshold` 0.1 cleared nothing). Every answer passes
`context_checks.check` (SDK types, an independent recount, the budget)."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

from tests.api.test_context_tool_results import PATH, STUB, _context, _tool_texts

KEEP = 5  # keep_tool_results' default
WORDS = (
    "status", "ok", "latency", "host", "region", "pool", "replica", "shard", "queue", "depth",
    "retries", "error", "timeout", "bytes", "cpu", "memory", "disk", "p99", "p50", "rps",
)  # fmt: skip


def _health_turn(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """User, a tool call, a ~320-token result, an answer: the issue's shape (its figures,
    784 of 800 messages removed and 4 pairs kept with clearing on or off, were this
    shape's before the fix)."""
    result = " ".join(f"{rng.choice(WORDS)}={rng.randint(0, 999)}" for _ in range(97))
    call = {"id": f"c{n}", "type": "function",
            "function": {"name": "health", "arguments": json.dumps({"turn": n})}}  # fmt: skip
    return [
        {"role": "user", "content": f"Turn {n}: check the service health and report."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"health report {n}: {result}"},
        {"role": "assistant", "content": f"Turn {n}: all checks passed."},
    ]


def _post(client: Any, body: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[str, list]:
    cid = client.post("/v1/conversations", json=body).json()["id"]
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text
    return cid, r.json()["data"]


def _paired(answer: dict[str, Any]) -> None:
    """Every tool message right after the call it answers (the pair kept whole)."""
    messages = answer["messages"]
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            calls = [c["id"] for c in messages[i - 1].get("tool_calls") or []]
            assert m["tool_call_id"] in calls, (i, m["tool_call_id"])


def _stubs_answer_200(client: Any, cid: str, stubs: list[str], stored: dict[str, Any]) -> None:
    for stub in stubs:
        found = PATH.search(stub)
        assert found is not None
        raw = client.get(f"/v1/conversations/{cid}/workspace/{found.group(1)}")
        message_id = found.group(1).split("/")[1].split(".")[0]
        assert raw.status_code == 200 and raw.text == stored[message_id]["content"]


def test_gpt4_first_read_keeps_the_newest_pairs_whole_and_the_stubs_in_view(
    app_client: Any,
) -> None:
    rng = random.Random(5)
    history = [m for n in range(1, 201) for m in _health_turn(rng, n)]
    body = {"model": "gpt-4", "system_prompt": "You watch services."}
    cid, stored = _post(app_client, body, history)
    answer = _context(app_client, cid)
    assert answer["budget_tokens"] == 3915 and answer["filtered"]
    _paired(answer)
    texts = _tool_texts(answer)
    whole = [t for t in texts if not t.startswith(STUB)]
    stubs = [t for t in texts if t.startswith(STUB)]
    # the newest keep_tool_results pairs whole (they fit the budget twice over) ...
    newest = [m["content"] for m in stored if m["role"] == "tool"][-KEEP:]
    assert len(whole) >= KEEP and texts[-KEEP:] == newest
    # ... and the stubs of the older ones in the room they leave, every path readable
    assert stubs and texts[: len(stubs)] == stubs
    assert len(stubs) == len(answer["cleared_tool_result_ids"])
    _stubs_answer_200(app_client, cid, stubs, {m["id"]: m for m in stored})
    # clearing keeps more in view than dropping alone: the same turns, nothing cleared
    off_body = {**body, "context_options": {"keep_tool_results": 1000}}
    off_cid, _ = _post(app_client, off_body, history)
    off = _context(app_client, off_cid)
    assert off["cleared_tool_result_ids"] == []
    assert len(answer["removed_message_ids"]) < len(off["removed_message_ids"])
    users = [sum(m["role"] == "user" for m in a["messages"]) for a in (answer, off)]
    assert users[0] > users[1]
    # the next turns keep that prefix while they fit: the move's cut left room for them
    turn = max(i for i, m in enumerate(answer["messages"]) if m["role"] == "user")
    before = answer["messages"][:turn]
    for n in range(201, 204):
        batch = {"messages": _health_turn(rng, n)}
        r = app_client.post(f"/v1/conversations/{cid}/messages", json=batch)
        assert r.status_code == 201, r.text
        again = _context(app_client, cid)
        assert again["messages"][: len(before)] == before
        assert again["cleared_tool_result_ids"] == answer["cleared_tool_result_ids"]


def _agent_run(rng: random.Random, pairs: int, start: int = 0) -> list[dict[str, Any]]:
    """An agent's tool loop in one task, shaped like a SWE-bench run: file views and
    searches of 40-110 numbered lines, short test runs, edits that answer "OK"."""

    def listing(lines: int) -> str:
        return "\n".join(
            f"{i:4d}  def f{i}(x): return x * {rng.randint(0, 99)}  # {rng.choice(WORDS)}"
            for i in range(lines)
        )

    out: list[dict[str, Any]] = []
    for n in range(start, start + pairs):
        name = ("view", "bash", "grep", "edit")[n % 4]
        call = {"id": f"call_{n}", "type": "function",
                "function": {"name": name, "arguments": json.dumps({"step": n})}}  # fmt: skip
        if name in ("view", "grep"):
            result = listing(rng.randint(40, 110))
        else:
            result = "OK" if name == "edit" else listing(rng.randint(5, 30))
        out.append({"role": "assistant", "content": f"Step {n}.", "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"call_{n}", "content": result})
    return out


def test_an_agent_run_over_its_threshold_clears_before_its_budget(app_client: Any) -> None:
    """gpt-4o, `context_threshold` 0.1, 41 tool pairs (about 33 000 tokens: usage 0.26,
    far under the budget of 88 292): the older results are stubs at once; then the line
    stays put while the carried context is under the threshold, and moves again only
    with a batch of results to clear, not once per new result."""
    rng = random.Random(7)
    task = {"role": "user", "content": "Fix the failing test in io/fits: " + "detail " * 50}
    body = {"model": "gpt-4o", "system_prompt": "You are a software engineer.",
            "context_threshold": 0.1}  # fmt: skip
    cid, stored = _post(app_client, body, [task, *_agent_run(rng, 41)])
    answer = _context(app_client, cid)
    assert answer["filtered"] and answer["usage_before"] > 0.2
    assert answer["removed_message_ids"] == []  # nothing had to be dropped
    _paired(answer)
    texts = _tool_texts(answer)
    results = [m for m in stored if m["role"] == "tool"]
    assert texts[-KEEP:] == [m["content"] for m in results[-KEEP:]]  # the newest whole
    for text, message in zip(texts[:-KEEP], results[:-KEEP], strict=True):
        long = len(message["content"]) > 200  # a shorter result is not worth a stub
        assert text.startswith(STUB) if long else text == message["content"]
    cleared = answer["cleared_tool_result_ids"]
    assert len(cleared) == sum(len(m["content"]) > 200 for m in results[:-KEEP]) > 20
    _stubs_answer_200(app_client, cid, [t for t in texts if t.startswith(STUB)],
                      {m["id"]: m for m in stored})  # fmt: skip
    # one step at a time: the line stays put (the prefix with it) until it moves again
    moves = []
    previous = answer
    for step in range(41, 81):
        r = app_client.post(
            f"/v1/conversations/{cid}/messages", json={"messages": _agent_run(rng, 1, step)}
        )
        assert r.status_code == 201, r.text
        current = _context(app_client, cid)
        if set(current["cleared_tool_result_ids"]) - set(previous["cleared_tool_result_ids"]):
            moves.append(step)
            assert current["token_count"] < previous["token_count"]
        else:
            assert current["messages"][: len(previous["messages"])] == previous["messages"]
        previous = current
    assert moves  # over the threshold again, it moved
    gaps = [b - a for a, b in zip([40, *moves], moves, strict=False)]
    assert min(gaps) >= KEEP  # a batch of results a move, never one per step


def test_a_window_read_kept_whole_keeps_its_start_as_the_cut_point(app_client: Any) -> None:
    """gpt-4-32k: a line moved for the hard room before filtering starts, then past the
    threshold the service reads only the newest messages the budget could hold stored,
    and with the stubs all of them fit. The window's start is stored as the cut point,
    so the next answers keep the prefix (they slid by a turn on every read, 62 % of
    answers keeping the prefix in bench/context.py section 3)."""
    rng = random.Random(5)
    body = {"model": "gpt-4-32k", "system_prompt": "You watch services."}
    cid, _ = _post(app_client, body, [m for n in range(1, 56) for m in _health_turn(rng, n)])
    hard_room_moves = 0
    answers: list[dict[str, Any]] = []
    for n in range(56, 100):
        batch = {"messages": _health_turn(rng, n)}
        r = app_client.post(f"/v1/conversations/{cid}/messages", json=batch)
        assert r.status_code == 201, r.text
        answer = _context(app_client, cid)
        if not answer["filtered"]:
            hard_room_moves += bool(answer["cleared_tool_result_ids"])
            continue
        answers.append(answer)
        if len(answers) == 8:
            break
    assert hard_room_moves and len(answers) == 8
    assert answers[0]["removed_message_ids"]  # the window left the oldest out
    for previous, answer in itertools.pairwise(answers):
        turn = max(i for i, m in enumerate(previous["messages"]) if m["role"] == "user")
        assert answer["messages"][:turn] == previous["messages"][:turn]
        assert answer["removed_message_ids"] == previous["removed_message_ids"]
