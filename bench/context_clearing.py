"""Clearing old tool results (SPEC §9, issues 10 and 17): section 3 of bench/context.py.

A 200-turn (60 with --quick) tool-heavy session (each turn: a user message, a tool
call, a ~240-token tool result, an answer) is posted turn by turn to the real API on a
small window (gpt-4, 8 192 tokens), and the context read after every turn, with
clearing on (the default `keep_tool_results` 5) and off (`keep_tool_results`
1 000 000: nothing is old enough). Reported: the first turn at which a message had to
be dropped, the turns (user messages) the contexts keep (the final one, and the mean
over the filtered turns: one turn is a point in the cut's cycle), the final tokens and
cleared results, the share of turns whose answer starts with what the previous one
held before its newest turn (the prefix measure of section 2; targets: >= 80 % with
clearing on, turns kept on / off >= 1.5x), the mean GET time of the reads that moved
the clearing line (they write the newly cleared results not yet in the workspace
before answering) against the others, and `GET /context` p50/p99 over the final
history. Baseline: the same session with clearing off.
"""

from __future__ import annotations

import json
import random
from typing import Any

from bench.history_http import _pct

TOOL_WORDS = (
    "status", "ok", "latency", "host", "region", "pool", "replica", "shard", "queue", "depth",
    "retries", "error", "timeout", "bytes", "cpu", "memory", "disk", "p99", "p50", "rps",
)  # fmt: skip
OFF = {"keep_tool_results": 1_000_000}


def _turn(rng: random.Random, n: int) -> list[dict[str, Any]]:
    result = " ".join(f"{rng.choice(TOOL_WORDS)}={rng.randint(0, 999)}" for _ in range(70))
    call = {"id": f"c{n}", "type": "function",
            "function": {"name": "health", "arguments": json.dumps({"turn": n})}}  # fmt: skip
    return [
        {"role": "user", "content": f"Turn {n}: check the service health and report."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"health report {n}: {result}"},
        {"role": "assistant", "content": f"Turn {n}: all checks passed."},
    ]


def _session(client: Any, options: dict[str, Any], turns: int) -> dict[str, Any]:
    import time

    from bench.context import _prefix, _starts_with

    rng = random.Random(5)
    body = {"model": "gpt-4", "system_prompt": "You watch services.", "context_options": options}
    cid = client.post("/v1/conversations", json=body).raise_for_status().json()["id"]
    url = f"/v1/conversations/{cid}/context"
    first_drop = None
    kept_prefix = compared = 0
    turns_kept: list[int] = []
    move_ms: list[float] = []
    still_ms: list[float] = []
    previous: dict[str, Any] | None = None
    answer: dict[str, Any] = {}
    for n in range(1, turns + 1):
        batch = {"messages": _turn(rng, n)}
        client.post(f"/v1/conversations/{cid}/messages", json=batch).raise_for_status()
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


def _users(answer: dict[str, Any]) -> int:
    return sum(1 for m in answer["messages"] if m["role"] == "user")


def _latency(client: Any, cid: str, requests: int) -> tuple[float, float]:
    import time

    url = f"/v1/conversations/{cid}/context"
    for _ in range(5):
        client.get(url).raise_for_status()
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        client.get(url).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    return _pct(times, 50), _pct(times, 99)


def clearing_section(client: Any, turns: int, requests: int) -> dict[str, dict[str, Any]]:
    on = _session(client, {}, turns)
    off = _session(client, OFF, turns)
    on["p50"], on["p99"] = _latency(client, on["cid"], requests)
    off["p50"], off["p99"] = _latency(client, off["cid"], requests)
    return {"clearing on (keep 5)": on, "clearing off (baseline)": off}


TARGET_PREFIX = 0.8
TARGET_TURNS = 1.5


def report_clearing(rows: dict[str, dict[str, Any]], turns: int) -> None:
    print(f"\n3. Clearing old tool results: a {turns}-turn tool-heavy session on gpt-4 (8k)")
    print(
        f"{'case':<26} {'first drop':>10} {'turns kept':>10} {'mean':>6} {'tokens':>7} "
        f"{'cleared':>8} {'prefix kept':>11} {'p50':>8} {'p99':>8}"
    )
    for label, r in rows.items():
        drop = f"turn {r['first_drop']}" if r["first_drop"] else "never"
        print(
            f"{label:<26} {drop:>10} {r['turns_kept']:>10} {r['mean_turns']:>6.1f} "
            f"{r['tokens']:>7} {r['cleared']:>8} {r['prefix']:>10.0%} {r['p50']:>6.1f}ms "
            f"{r['p99']:>6.1f}ms"
        )
    on, off = rows["clearing on (keep 5)"], rows["clearing off (baseline)"]
    mean_ratio = on["mean_turns"] / max(0.001, off["mean_turns"])
    print(
        f"turns kept on / off: {on['turns_kept'] / max(1, off['turns_kept']):.2f}x final, "
        f"{mean_ratio:.2f}x mean; p99 on / off: {on['p99'] / max(0.001, off['p99']):.2f}x"
    )
    print(
        f"reads that moved the clearing line: {on['moves']}, {on['move_ms']:.1f} ms mean "
        f"(they write the newly cleared results first) against {on['still_ms']:.1f} ms"
    )
    met = on["prefix"] >= TARGET_PREFIX and mean_ratio >= TARGET_TURNS
    print(
        f"target prefix kept with clearing >= {TARGET_PREFIX:.0%} and turns kept on / off "
        f">= {TARGET_TURNS}x (mean): {'MET' if met else 'MISSED'}"
    )
