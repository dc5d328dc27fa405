"""Clearing old tool results (docs/context.md#clearing-old-tool-results-with-hysteresis, issues 10,
17 and 29): section 3 of bench/context.py.

Tool-heavy sessions (each turn: a user message, a tool call, a tool result, an answer)
on a small window (gpt-4, 8 192 tokens, budget 3 915) and a 32K one (gpt-4-32k, 32 768
tokens, budget 18 660), with two result sizes: ~240 tokens (the section's shape since
issue 17) and ~320 tokens (issue 29's, where clearing used to keep nothing more in
view on gpt-4). Each is run with clearing on (the default `keep_tool_results` 5) and off
(`keep_tool_results` 1 000 000: nothing is old enough): the baseline, in the same run.

- Turn by turn: 200 turns (60 on gpt-4 with --quick, 150 on the 32K model, whose budget
  holds about 60 turns), each posted to the real API and the context read after it.
  Reported: the first turn at which a message had to be dropped, the turns (user
  messages) the contexts keep (the final one, and the mean over the filtered turns: one
  turn is a point in the cut's cycle), the final tokens and cleared results, the share
  of turns whose answer starts with what the previous one held before its newest turn
  (the prefix measure of section 2). Targets: prefix kept >= 80 % with clearing on,
  turns kept on / off >= 1.5x (mean). For the ~240-token shape, the mean GET time of the
  reads that moved the clearing line (they write the newly cleared results not yet in
  the workspace before answering) against the others, and `GET /context` p50/p99 over
  the final history.
- First read: the same turns imported in one batch, then one read (the case issue 29
  reported: on gpt-4, 784 of 800 messages removed with clearing on or off): messages
  removed on / off, the newest results whole, the stubs.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from bench.history_http import _pct

TOOL_WORDS = (
    "status", "ok", "latency", "host", "region", "pool", "replica", "shard", "queue", "depth",
    "retries", "error", "timeout", "bytes", "cpu", "memory", "disk", "p99", "p50", "rps",
)  # fmt: skip
OFF = {"keep_tool_results": 1_000_000}
MODELS = ("gpt-4", "gpt-4-32k")
SHAPES = (70, 97)  # key=value pairs in a result: ~240 and ~320 tokens
LARGE_MIN_TURNS = 150  # the 32K budget holds about 60 turns: enough past it to cycle
STUB = "[Old tool result cleared ("


def _turn(rng: random.Random, n: int, pairs: int) -> list[dict[str, Any]]:
    result = " ".join(f"{rng.choice(TOOL_WORDS)}={rng.randint(0, 999)}" for _ in range(pairs))
    call = {"id": f"c{n}", "type": "function",
            "function": {"name": "health", "arguments": json.dumps({"turn": n})}}  # fmt: skip
    return [
        {"role": "user", "content": f"Turn {n}: check the service health and report."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"health report {n}: {result}"},
        {"role": "assistant", "content": f"Turn {n}: all checks passed."},
    ]


def _create(client: Any, model: str, options: dict[str, Any]) -> str:
    body = {"model": model, "system_prompt": "You watch services.", "context_options": options}
    return str(client.post("/v1/conversations", json=body).raise_for_status().json()["id"])


def _session(
    client: Any, model: str, pairs: int, options: dict[str, Any], turns: int
) -> dict[str, Any]:
    from bench.context import _prefix, _starts_with

    rng = random.Random(5)
    cid = _create(client, model, options)
    url = f"/v1/conversations/{cid}/context"
    first_drop = None
    kept_prefix = compared = 0
    turns_kept: list[int] = []
    move_ms: list[float] = []
    still_ms: list[float] = []
    result_tokens: list[int] = []
    previous: dict[str, Any] | None = None
    answer: dict[str, Any] = {}
    for n in range(1, turns + 1):
        batch = {"messages": _turn(rng, n, pairs)}
        posted = client.post(f"/v1/conversations/{cid}/messages", json=batch).raise_for_status()
        result_tokens.append(posted.json()["data"][2]["token_count"])
        started = time.perf_counter()
        answer = client.get(url).raise_for_status().json()
        elapsed = (time.perf_counter() - started) * 1000
        cleared = set(answer["cleared_tool_result_ids"])
        moved = previous is not None and bool(cleared - set(previous["cleared_tool_result_ids"]))
        (move_ms if moved else still_ms).append(elapsed)
        if answer["removed_message_ids"] and first_drop is None:
            first_drop = n
        if previous is not None and previous["filtered"] and answer["filtered"]:
            compared += 1
            kept_prefix += _starts_with(answer, _prefix(previous))
            turns_kept.append(_users(answer))
        previous = answer
    return {
        "cid": cid,
        "result_tokens": sum(result_tokens) / len(result_tokens),
        "budget": answer["budget_tokens"],
        "first_drop": first_drop,
        "turns_kept": _users(answer),
        "mean_turns": sum(turns_kept) / len(turns_kept) if turns_kept else 0.0,
        "tokens": answer["token_count"],
        "cleared": len(answer["cleared_tool_result_ids"]),
        "prefix": kept_prefix / compared if compared else 0.0,
        "moves": len(move_ms),
        "move_ms": sum(move_ms) / len(move_ms) if move_ms else 0.0,
        "still_ms": sum(still_ms) / len(still_ms) if still_ms else 0.0,
    }


def _first_read(
    client: Any, model: str, pairs: int, options: dict[str, Any], turns: int
) -> dict[str, Any]:
    """The turns imported in one batch, then one read: what it removes and keeps."""
    rng = random.Random(5)
    cid = _create(client, model, options)
    history = [m for n in range(1, turns + 1) for m in _turn(rng, n, pairs)]
    client.post(f"/v1/conversations/{cid}/messages", json={"messages": history}).raise_for_status()
    answer = client.get(f"/v1/conversations/{cid}/context").raise_for_status().json()
    texts = [m["content"] for m in answer["messages"] if m["role"] == "tool"]
    stubs = sum(t.startswith(STUB) for t in texts)
    stubbed = [k for k, t in enumerate(reversed(texts)) if t.startswith(STUB)]
    newest_whole = stubbed[0] if stubbed else len(texts)
    return {
        "messages": len(history),
        "removed": len(answer["removed_message_ids"]),
        "newest_whole": newest_whole,
        "stubs": stubs,
        "turns": _users(answer),
    }


def _users(answer: dict[str, Any]) -> int:
    return sum(1 for m in answer["messages"] if m["role"] == "user")


def _latency(client: Any, cid: str, requests: int) -> tuple[float, float]:
    url = f"/v1/conversations/{cid}/context"
    for _ in range(5):
        client.get(url).raise_for_status()
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        client.get(url).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    return _pct(times, 50), _pct(times, 99)


def clearing_section(client: Any, turns: int, requests: int) -> dict[str, Any]:
    """Every model and shape, clearing on and off: {(model, pairs): {"on", "off",
    "first_on", "first_off"}}."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for model in MODELS:
        count = turns if model == MODELS[0] else max(turns, LARGE_MIN_TURNS)
        for pairs in SHAPES:
            row = {
                "on": _session(client, model, pairs, {}, count),
                "off": _session(client, model, pairs, OFF, count),
                "first_on": _first_read(client, model, pairs, {}, count),
                "first_off": _first_read(client, model, pairs, OFF, count),
                "turns": count,
            }
            if pairs == SHAPES[0]:
                for case in ("on", "off"):
                    r = row[case]
                    r["p50"], r["p99"] = _latency(client, r["cid"], requests)
            rows[(model, pairs)] = row
    return {"rows": rows}


TARGET_PREFIX = 0.8
TARGET_TURNS = 1.5


def _ms(r: dict[str, Any], key: str) -> str:
    return f"{r[key]:>6.1f}ms" if key in r else f"{'-':>8}"


def report_clearing(section: dict[str, Any], turns: int) -> None:
    rows: dict[tuple[str, int], dict[str, Any]] = section["rows"]
    print(
        f"\n3. Clearing old tool results: tool-heavy sessions posted turn by turn ({turns} "
        f"turns on {MODELS[0]}, {max(turns, LARGE_MIN_TURNS)} on {MODELS[1]}), clearing on "
        "(keep 5) and off"
    )
    print(
        f"{'model (budget)':<18} {'result':>7} {'case':<4} {'first drop':>10} "
        f"{'turns kept':>10} {'mean':>6} {'tokens':>7} {'cleared':>8} {'prefix kept':>11} "
        f"{'p50':>8} {'p99':>8}"
    )
    for (model, _), row in rows.items():
        for case in ("on", "off"):
            r = row[case]
            drop = f"turn {r['first_drop']}" if r["first_drop"] else "never"
            label = f"{model} ({r['budget']})"
            print(
                f"{label:<18} {r['result_tokens']:>5.0f}tk {case:<4} "
                f"{drop:>10} {r['turns_kept']:>10} {r['mean_turns']:>6.1f} {r['tokens']:>7} "
                f"{r['cleared']:>8} {r['prefix']:>10.1%} {_ms(r, 'p50')} {_ms(r, 'p99')}"
            )
    print("turns kept on / off (mean over the filtered turns) and the targets:")
    met = True
    for (model, _), row in rows.items():
        on, off = row["on"], row["off"]
        ratio = on["mean_turns"] / max(0.001, off["mean_turns"])
        ok = on["prefix"] >= TARGET_PREFIX and ratio >= TARGET_TURNS
        met = met and ok
        print(
            f"  {model}, ~{on['result_tokens']:.0f}-token results: {ratio:.2f}x "
            f"({on['turns_kept'] / max(1, off['turns_kept']):.2f}x final), prefix kept "
            f"{on['prefix']:.1%} on / {off['prefix']:.1%} off: {'MET' if ok else 'MISSED'}"
        )
    print(
        f"target prefix kept with clearing >= {TARGET_PREFIX:.0%} and turns kept on / off "
        f">= {TARGET_TURNS}x (mean), every row: {'MET' if met else 'MISSED'}"
    )
    for (model, _), row in rows.items():
        on = row["on"]
        if "p50" in on:
            print(
                f"{model}: reads that moved the clearing line: {on['moves']}, "
                f"{on['move_ms']:.1f} ms mean (they write the newly cleared results first) "
                f"against {on['still_ms']:.1f} ms; p99 on / off "
                f"{on['p99'] / max(0.001, row['off']['p99']):.2f}x"
            )
    print("first read after importing the turns in one batch (removed of all messages):")
    for (model, _), row in rows.items():
        a, b = row["first_on"], row["first_off"]
        print(
            f"  {model}, ~{row['on']['result_tokens']:.0f}-token results: removed "
            f"{a['removed']} on / {b['removed']} off of {a['messages']}; turns kept "
            f"{a['turns']} / {b['turns']}; with clearing the newest {a['newest_whole']} "
            f"results whole and {a['stubs']} stubs"
        )
