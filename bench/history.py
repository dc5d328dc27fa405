"""History benchmarks (issue 4), in-process part; prints figures and ratios.

    .venv/bin/python bench/history.py            # everything in-process
    .venv/bin/python bench/history.py --quick    # smaller sizes, fewer repeats
    .venv/bin/python bench/history.py --api http://127.0.0.1:8000 --key KEY   # + HTTP section

Sections:
1. selection: `token_budget` vs LangChain `trim_messages` on the same messages with the
   same budget and the same precomputed per-message token counts, at 100 / 1 000 /
   10 000 / 100 000 messages (target: ≥ 10x faster at 10 000; our cost flat in history
   length because it grows with what is kept);
2. the engine's whole history-context build (`build_history_context`) p50/p99;
3. compaction of a 200 000-token history: truncation fallback (≤ 100 ms) and extractive
   summary (≤ 2 s);
4. hierarchical memory `add_action` including compression (p99 ≤ 5 ms);
5. `http_section(args)`: context request latency over HTTP — a hook for the service
   layer, does nothing unless `--api` is given.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
# run as a script, the project root goes on the import path
sys.path.insert(0, str(_HERE.parent))

from contextq.assembly import build_history_context  # noqa: E402
from contextq.history import (  # noqa: E402
    ExtractiveSummarizer,
    HierarchicalMemory,
    Message,
    compact,
    count_message_tokens,
    token_budget,
)
from contextq.history.pinned import find_anchors  # noqa: E402
from contextq.settings import Settings  # noqa: E402

WORDS = (
    "agent",
    "reads",
    "file",
    "config",
    "parser",
    "error",
    "timeout",
    "decided",
    "retry",
    "database",
    "schema",
    "index",
    "query",
    "user",
    "wants",
    "report",
    "summary",
    "latency",
    "cache",
    "worker",
    "queue",
    "deploy",
    "migration",
    "test",
    "build",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "for",
    "on",
    "with",
    "as",
    "was",
    "at",
    "by",
    "an",
    "be",
    "this",
    "from",
    "or",
)
MODEL = "gpt-4o"


# ---------------------------------------------------------------- data


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def unique_history(n: int, seed: int = 0) -> list[Message]:
    """A tool-calling agent history of about `n` messages with real token counts."""
    rng = random.Random(seed)
    out = [Message(role="system", content="You are a careful coding agent.", seq=0, id="m0")]
    seq = 0
    while len(out) < n:
        seq += 1
        out.append(
            Message(
                role="user",
                content=_text(rng, rng.randint(8, 60)),
                seq=seq,
                id=f"m{seq}",
                kind="user_prompt",
            )
        )
        for _ in range(rng.randint(0, 2)):
            seq += 1
            ids = [f"call_{seq}_{j}" for j in range(rng.randint(1, 2))]
            calls = [
                {
                    "id": c,
                    "type": "function",
                    "function": {
                        "name": rng.choice(["read_file", "grep", "run_tests"]),
                        "arguments": json.dumps({"path": f"src/m{rng.randint(1, 50)}.py"}),
                    },
                }
                for c in ids
            ]
            out.append(
                Message(role="assistant", tool_calls=calls, seq=seq, id=f"m{seq}", kind="tool_call")
            )
            for c in ids:
                seq += 1
                failed = rng.random() < 0.08
                content = (
                    f"Error: timeout after {rng.randint(1, 999)} ms"
                    if failed
                    else _text(rng, rng.randint(20, 200))
                )
                out.append(
                    Message(
                        role="tool",
                        tool_call_id=c,
                        content=content,
                        seq=seq,
                        id=f"m{seq}",
                        kind="error" if failed else "observation",
                    )
                )
        seq += 1
        out.append(
            Message(
                role="assistant",
                content=_text(rng, rng.randint(10, 80)),
                seq=seq,
                id=f"m{seq}",
                kind=rng.choice(["reasoning", "decision"]),
            )
        )
    out = out[:n]
    while out[-1].role == "assistant" and out[-1].tool_calls:  # do not end inside a chain
        out.pop()
    for m in out:
        m.token_count = count_message_tokens(m, MODEL)
    return out


def scaled_history(base: list[Message], n: int) -> list[Message]:
    """`n` messages by repeating `base` (same contents, so no re-counting), fresh ids."""
    out: list[Message] = []
    rounds = 0
    while len(out) < n:
        for m in base[1:] if rounds else base:
            if len(out) >= n:
                break
            clone = copy.copy(m)
            clone.seq = len(out)
            clone.id = f"m{len(out)}"
            if m.tool_calls:
                clone.tool_calls = [{**c, "id": f"{c['id']}_{rounds}"} for c in m.tool_calls]
            if m.tool_call_id:
                clone.tool_call_id = f"{m.tool_call_id}_{rounds}"
            out.append(clone)
        rounds += 1
    while out[-1].role != "assistant" or out[-1].tool_calls:
        out.pop()
    return out


def to_langchain(messages: Sequence[Message]) -> tuple[list[Any], dict[str, int]]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    counts: dict[str, int] = {}
    for m in messages:
        lc: Any
        if m.role == "system":
            lc = SystemMessage(content=m.text(), id=m.id)
        elif m.role == "user":
            lc = HumanMessage(content=m.text(), id=m.id)
        elif m.role == "tool":
            lc = ToolMessage(content=m.text(), tool_call_id=m.tool_call_id or "", id=m.id)
        else:
            calls = [
                {
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"]["arguments"]),
                    "id": c["id"],
                    "type": "tool_call",
                }
                for c in m.tool_calls or ()
            ]
            lc = AIMessage(content=m.text(), tool_calls=calls, id=m.id)
        out.append(lc)
        counts[str(m.id)] = m.token_count or 0
    return out, counts


# ---------------------------------------------------------------- timing helpers


def settle() -> None:
    """Collect, then move every live object out of the cyclic GC's generations: the
    prepared data stands for rows already read, and its size must not turn into GC
    pauses charged to the code under test."""
    gc.collect()
    gc.freeze()


def timeit(
    fn: Callable[[], object],
    *,
    repeat: int,
    budget_s: float = 20.0,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Run `fn` up to `repeat` times (stopping after `budget_s`); times in ms."""
    times = []
    started = time.perf_counter()
    for _ in range(repeat):
        t = clock()
        fn()
        times.append((clock() - t) * 1000)
        if time.perf_counter() - started > budget_s and len(times) >= 3:
            break
    return times


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fmt(ms: float) -> str:
    return f"{ms:9.3f} ms"


# ---------------------------------------------------------------- sections


def selection_section(args: argparse.Namespace, base: list[Message]) -> dict[int, float]:
    from langchain_core.messages import BaseMessage, trim_messages

    print(
        f"\n1. Selection: token_budget vs LangChain trim_messages (budget {args.budget} tokens,"
        " same messages, same precomputed counts)"
    )
    print(
        f"{'messages':>9} {'kept':>6} {'LC kept':>7} {'ours (scan)':>14} {'ours (anchors)':>15}"
        f" {'trim_messages':>14} {'ratio scan':>11} {'ratio svc':>10}"
    )
    print(
        "   ('scan': our function finds system/pinned messages itself; 'anchors': it is given"
        " their stored indices, as the service does — like both sides are given stored counts)"
    )
    ratios: dict[int, tuple[float, float]] = {}
    for n in args.sizes:
        msgs = scaled_history(base, n)
        lc_msgs, counts = to_langchain(msgs)
        settle()

        def counter(batch: list[BaseMessage], _counts: dict[str, int] = counts) -> int:
            return sum(_counts[str(m.id)] for m in batch)  # the stored counts, summed

        anchors = find_anchors(msgs)
        ours = timeit(
            lambda m=msgs: token_budget(m, budget_tokens=args.budget, min_messages_to_keep=0),
            repeat=args.repeat,
        )
        ours_anchored = timeit(
            lambda m=msgs, a=anchors: token_budget(
                m, budget_tokens=args.budget, min_messages_to_keep=0, anchors=a
            ),
            repeat=args.repeat,
        )
        theirs = timeit(
            lambda lm=lc_msgs, c=counter: trim_messages(
                lm,
                max_tokens=args.budget,
                token_counter=c,
                strategy="last",
                include_system=True,
                start_on="human",
                allow_partial=False,
            ),
            repeat=max(5, args.repeat // 2),
        )
        kept = len(token_budget(msgs, budget_tokens=args.budget, min_messages_to_keep=0).kept)
        lc_kept = len(
            trim_messages(
                lc_msgs,
                max_tokens=args.budget,
                token_counter=counter,
                strategy="last",
                include_system=True,
                start_on="human",
            )
        )
        ratio = statistics.median(theirs) / statistics.median(ours)
        ratio_svc = statistics.median(theirs) / statistics.median(ours_anchored)
        ratios[n] = (ratio, ratio_svc)
        print(
            f"{len(msgs):>9} {kept:>6} {lc_kept:>7} {fmt(statistics.median(ours)):>14}"
            f" {fmt(statistics.median(ours_anchored)):>15} {fmt(statistics.median(theirs)):>14}"
            f" {ratio:>10.0f}x {ratio_svc:>9.0f}x"
        )
    return ratios


def context_section(args: argparse.Namespace, base: list[Message]) -> None:
    settings = Settings()
    print(
        "\n2. Whole history-context build in process (build_history_context, gpt-4o,"
        " token_budget, 1 pinned message)"
    )
    print("   (running token total given, as the service stores it; CPU = process time)")
    print(f"{'messages':>9} {'kept':>6} {'p50':>12} {'p99':>12} {'CPU p50':>12}")
    for n in args.sizes:
        msgs = scaled_history(base, n)
        msgs[len(msgs) // 3].pinned = True
        total = sum(m.token_count or 0 for m in msgs)
        settle()

        def run(m: list[Message] = msgs, t: int = total) -> Any:
            return build_history_context(
                m,
                settings=settings,
                conversation_id="bench",
                model=MODEL,
                system_prompt="Be precise.",
                history_tokens=t,
            )

        ctx = run()
        times = timeit(run, repeat=args.repeat * 2)
        cpu = timeit(run, repeat=args.repeat, clock=time.process_time)
        print(
            f"{len(msgs):>9} {ctx.report['kept_message_count']:>6} {fmt(pct(times, 0.5)):>12}"
            f" {fmt(pct(times, 0.99)):>12} {fmt(pct(cpu, 0.5)):>12}"
        )


def compaction_section(args: argparse.Namespace, base: list[Message]) -> None:
    settings = Settings()
    msgs = list(base)
    while sum(m.token_count or 0 for m in msgs) < args.compaction_tokens:
        msgs = scaled_history(base, len(msgs) + len(base))
    total = 0
    cut = 0
    for cut, m in enumerate(msgs):  # noqa: B007
        total += m.token_count or 0
        if total >= args.compaction_tokens:
            break
    msgs = msgs[: cut + 1]
    total = sum(m.token_count or 0 for m in msgs)
    settle()
    print(
        f"\n3. Compaction of a {total:,}-token history ({len(msgs):,} messages), target "
        f"{settings.HISTORY_COMPACTION_TARGET_TOKENS:,} tokens"
    )
    for label, summarizer, limit_ms in (
        ("truncation fallback", None, 100.0),
        ("extractive summary", ExtractiveSummarizer(), 2000.0),
    ):
        outcome = compact(msgs, summarizer, settings)
        times = timeit(
            lambda s=summarizer: compact(msgs, s, settings), repeat=max(3, args.repeat // 10)
        )
        assert outcome is not None
        verdict = "ok" if statistics.median(times) <= limit_ms else "OVER TARGET"
        print(
            f"   {label:<20} median {fmt(statistics.median(times))}  (target ≤ {limit_ms:g} ms,"
            f" {verdict}); {outcome.original_tokens:,} → {outcome.compacted_tokens:,} tokens,"
            f" through #{outcome.through_seq}"
        )


def memory_section(args: argparse.Namespace) -> None:
    memory = HierarchicalMemory()
    rng = random.Random(1)
    kinds = ("tool_call", "observation", "reasoning", "error", "decision", "user_prompt")
    times = []
    for i in range(args.memory_actions):
        kind = rng.choice(kinds)
        t = time.perf_counter()
        memory.add_action(
            kind,
            f"step {i}: {_text(rng, 12)}",
            tool="run_tests",
            success=rng.random() > 0.1,
            files=[f"src/m{rng.randint(1, 40)}.py"],
        )
        times.append((time.perf_counter() - t) * 1000)
    verdict = "ok" if pct(times, 0.99) <= 5.0 else "OVER TARGET"
    print(
        f"\n4. Hierarchical memory add_action ({args.memory_actions:,} actions, "
        f"{memory.compressions:,} compressions): p50 {pct(times, 0.5):.4f} ms, "
        f"p99 {pct(times, 0.99):.4f} ms, max {max(times):.3f} ms (target p99 ≤ 5 ms, {verdict})"
    )


def http_section(args: argparse.Namespace) -> None:
    """Context request latency over HTTP (p50/p99) at 100 / 1 000 / 10 000 / 100 000 messages.

    A hook for the service layer: does nothing unless `--api URL` is given.
    """
    if not (args.api or args.http):
        print("\n5. HTTP context latency: skipped (pass --http, or --api URL --key KEY)")
        return
    print("\n5. HTTP context latency (bench/history_http.py)")
    from bench import history_http  # the service layer's part

    args.http_sizes = args.sizes
    history_http.http_section(args)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--compaction-tokens", type=int, default=200_000)
    parser.add_argument("--memory-actions", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument(
        "--http",
        action="store_true",
        help="also measure GET /context over HTTP (starts a local API)",
    )
    parser.add_argument("--api", default=None, help="base URL of a running contextq API")
    parser.add_argument("--key", default=None, help="API key for --api")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes = [100, 1_000, 10_000]
        args.repeat = 10
        args.memory_actions = 5_000
    started = time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} (times are wall clock)")
    base = unique_history(10_000, seed=7)
    print(
        f"prepared 10 000 unique messages ({sum(m.token_count or 0 for m in base):,} tokens)"
        f" in {time.perf_counter() - started:.1f} s"
    )
    settle()
    ratios = selection_section(args, base)
    context_section(args, base)
    compaction_section(args, base)
    memory_section(args)
    http_section(args)
    if 10_000 in ratios:
        scan, svc = ratios[10_000]
        verdict = "ok" if svc >= 10 else "BELOW TARGET"
        print(
            f"\nselection at 10 000 messages: {svc:.0f}x faster than trim_messages as the service"
            f" runs it, {scan:.0f}x when it also finds the anchors itself"
            f" (target ≥ 10x, {verdict})"
        )


if __name__ == "__main__":
    main()
