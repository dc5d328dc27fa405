"""Reasoning state in the context (docs/context.md#reasoning-state, issue 26): section 4 of
bench/context.py.

A 10 000-message agent conversation posted natively (2 500 turns: a question, a model
step that thinks and calls a tool, its result, a step that thinks and answers), every
model step carrying reasoning — Anthropic `thinking` blocks with signatures, Responses
`reasoning` items with summaries and `encrypted_content`, Gemini thought parts and
`thoughtSignature`s —, about a third of the history's tokens. Read in each of the four
formats: `anthropic`, `responses` and `gemini` from their own vendor's history (the
stored payload passes through as it came, reasoning included: claude-opus-4-7, gpt-5.6
and gemini-3-pro-preview keep earlier turns' reasoning), `openai` from the Responses
history (gpt-4o: the reasoning left out, counted as `other_vendor`). Each conversation's
budget is gpt-4o's (about 88 K tokens, set with `budget_percentage`; the reads force
filtering): those models have windows of 400 K to 1 M tokens, and a read costs what it
keeps (docs/history.md#the-ready-to-send-context), so the four reads keep comparable histories.
Baseline, in the same run: the same turns without their reasoning. Targets: p99 <= 50 ms for each
format, and with reasoning within 1.2x of without.
"""

from __future__ import annotations

import base64
import random
import statistics
import time
from typing import Any

from bench.history_http import _pct

TARGET_P99_MS = 50.0
TARGET_RATIO = 1.2
TURNS = 2_500  # 4 rows each: 10 000 messages
_TEXT = (
    "the queue worker parses config files and retries failed uploads before timeout while "
    "the cache keeps recent results for the parser and the scheduler checks each shard"
)
WORDS = tuple(_TEXT.split(" "))
# (history's vendor, read format, model)
READS = (
    ("anthropic", "anthropic", "claude-opus-4-7"),
    ("responses", "responses", "gpt-5.6"),
    ("gemini", "gemini", "gemini-3-pro-preview"),
    ("responses", "openai", "gpt-4o"),
)
BODY_KEYS = {"anthropic": "messages", "responses": "items", "gemini": "contents"}


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _opaque(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def _anthropic_turn(rng: random.Random, t: int, reasoning: bool) -> list[dict[str, Any]]:
    def thinking() -> list[dict[str, Any]]:
        block = {"type": "thinking", "thinking": _words(rng, 25), "signature": _opaque(rng, 40)}
        return [block] if reasoning else []

    call = {"type": "tool_use", "id": f"toolu_{t}", "name": "bash", "input": {"cmd": "make"}}
    result = {"type": "tool_result", "tool_use_id": f"toolu_{t}", "content": _words(rng, 120)}
    return [
        {"role": "user", "content": f"Turn {t}: {_words(rng, 25)}"},
        {
            "role": "assistant",
            "content": [*thinking(), {"type": "text", "text": _words(rng, 20)}, call],
        },
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": [*thinking(), {"type": "text", "text": _words(rng, 40)}]},
    ]


def _responses_turn(rng: random.Random, t: int, reasoning: bool) -> list[dict[str, Any]]:
    def thought(n: int) -> list[dict[str, Any]]:
        item = {
            "type": "reasoning",
            "id": f"rs_{t}_{n}",
            "summary": [{"type": "summary_text", "text": _words(rng, 15)}],
            "encrypted_content": _opaque(rng, 48),
        }
        return [item] if reasoning else []

    call = {
        "type": "function_call",
        "id": f"fc_{t}",
        "call_id": f"call_{t}",
        "name": "bash",
        "arguments": '{"cmd": "make"}',
        "status": "completed",
    }
    answer = {
        "type": "message",
        "id": f"msg_{t}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": _words(rng, 60), "annotations": []}],
    }
    return [
        {"type": "message", "role": "user", "content": f"Turn {t}: {_words(rng, 25)}"},
        *thought(1),
        call,
        {"type": "function_call_output", "call_id": f"call_{t}", "output": _words(rng, 120)},
        *thought(2),
        answer,
    ]


def _gemini_turn(rng: random.Random, t: int, reasoning: bool) -> list[dict[str, Any]]:
    def thought() -> list[dict[str, Any]]:
        return [{"text": _words(rng, 38), "thought": True}] if reasoning else []

    def signed(part: dict[str, Any]) -> dict[str, Any]:
        return {**part, "thoughtSignature": _opaque(rng, 32)} if reasoning else part

    call = {"functionCall": {"name": "bash", "args": {"cmd": "make"}, "id": f"call_{t}"}}
    response = {"name": "bash", "id": f"call_{t}", "response": {"output": _words(rng, 120)}}
    return [
        {"role": "user", "parts": [{"text": f"Turn {t}: {_words(rng, 25)}"}]},
        {"role": "model", "parts": [*thought(), {"text": _words(rng, 20)}, signed(call)]},
        {"role": "user", "parts": [{"functionResponse": response}]},
        {"role": "model", "parts": [*thought(), signed({"text": _words(rng, 40)})]},
    ]


TURN_BUILDERS = {"anthropic": _anthropic_turn, "responses": _responses_turn, "gemini": _gemini_turn}


def _options(model: str) -> dict[str, float]:
    """`budget_percentage` giving `model` gpt-4o's budget (the formula of
    docs/context.md#the-rooms)."""
    from contextq.catalog import resolve_model
    from contextq.history.budget import compute_budget
    from contextq.settings import get_settings

    def room(name: str) -> int:
        limits = resolve_model(name, get_settings())
        budget = compute_budget(
            context_limit=limits.context_window, model_max_output=limits.max_output_tokens
        )
        return budget.hard_limit_tokens

    wanted = int(room("gpt-4o") * 0.8)  # the default budget_percentage's share of gpt-4o
    return {"budget_percentage": round(wanted / room(model), 4)}


def _conversation(client: Any, vendor: str, model: str, reasoning: bool) -> str:
    rng = random.Random(11)  # the same words with and without reasoning
    turns = [TURN_BUILDERS[vendor](rng, t, reasoning) for t in range(TURNS)]
    body = {"model": model, "context_options": _options(model)}
    cid = client.post("/v1/conversations", json=body).raise_for_status().json()["id"]
    for i in range(0, len(turns), 1_000):  # whole turns, at most 6 000 items a batch
        batch = [row for turn in turns[i : i + 1_000] for row in turn]
        body = {"format": vendor, BODY_KEYS[vendor]: batch, "model": model}
        client.post(f"/v1/conversations/{cid}/messages", json=body).raise_for_status()
    return str(cid)


def _reads(client: Any, cid: str, fmt: str, model: str, requests: int) -> dict[str, Any]:
    url = f"/v1/conversations/{cid}/context"
    params = {"format": fmt, "model": model, "force_filter": "true"}
    answer = client.get(url, params=params).raise_for_status().json()
    for _ in range(5):
        client.get(url, params=params).raise_for_status()
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        client.get(url, params=params).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    return {
        "p50": _pct(times, 50),
        "p99": _pct(times, 99),
        "mean": statistics.fmean(times),
        "kept": answer["kept_message_count"],
        "tokens": answer["token_count"],
        "reasoning": answer["token_breakdown"]["reasoning"],
        "dropped": answer["reasoning_dropped"],
        "budget": answer["budget_tokens"],
    }


def _stored_tokens(client: Any, cid: str) -> int:
    """The conversation's stored tokens (each native row counts its payload's JSON)."""
    conversation = client.get(f"/v1/conversations/{cid}").raise_for_status().json()
    return int(conversation["total_tokens"])


def reasoning_section(client: Any, requests: int) -> dict[str, Any]:
    made: dict[tuple[str, bool], str] = {}
    for vendor in TURN_BUILDERS:
        model = next(m for v, f, m in READS if v == vendor and f == vendor)
        for reasoning in (True, False):
            made[(vendor, reasoning)] = _conversation(client, vendor, model, reasoning)
    shares = {
        vendor: 1
        - _stored_tokens(client, made[(vendor, False)])
        / _stored_tokens(client, made[(vendor, True)])
        for vendor in TURN_BUILDERS
    }
    rows = []
    for vendor, fmt, model in READS:
        with_r = _reads(client, made[(vendor, True)], fmt, model, requests)
        without = _reads(client, made[(vendor, False)], fmt, model, requests)
        rows.append({"vendor": vendor, "format": fmt, "model": model, "with": with_r,
                     "without": without})  # fmt: skip
    return {"shares": shares, "rows": rows}


def report_reasoning(section: dict[str, Any]) -> None:
    print(
        "\n4. Reasoning state: 10 000 native messages, every model step carrying reasoning, "
        "read in each format over HTTP; baseline: the same turns without reasoning"
    )
    shares = ", ".join(f"{v} {s:.0%}" for v, s in section["shares"].items())
    print(f"reasoning's share of the stored history's tokens: {shares}")
    print(
        f"{'history':<10} {'format':<10} {'model':<21} {'p50':>8} {'p99':>8} {'p99 w/o':>8} "
        f"{'ratio':>6} {'kept':>5} {'tokens':>7} {'reasoning':>9}  dropped"
    )
    ok = True
    for row in section["rows"]:
        w, wo = row["with"], row["without"]
        ratio = w["p99"] / wo["p99"] if wo["p99"] else 0.0
        ok &= w["p99"] <= TARGET_P99_MS and ratio <= TARGET_RATIO
        dropped = {k: v for k, v in w["dropped"].items() if v}
        print(
            f"{row['vendor']:<10} {row['format']:<10} {row['model']:<21} {w['p50']:>6.1f}ms "
            f"{w['p99']:>6.1f}ms {wo['p99']:>6.1f}ms {ratio:>5.2f}x {w['kept']:>5} "
            f"{w['tokens']:>7} {w['reasoning']:>9}  {dropped or '-'}"
        )
    verdict = "MET" if ok else "MISSED"
    print(
        f"target p99 <= {TARGET_P99_MS:.0f} ms in each format and within "
        f"{TARGET_RATIO}x of the history without reasoning: {verdict}"
    )
