"""What a compaction keeps (docs/performance.md quality benchmark); prints figures and ratios.

    .venv/bin/python bench/compaction_quality.py            # 10 sessions of 300 turns
    .venv/bin/python bench/compaction_quality.py --quick    # 5 sessions

1. Retention by fact class on generated 300-turn agent sessions (`bench/agent_sessions.py`:
   five domains, three tool-output styles, facts seeded at random turns), all methods on
   the same sessions in the same run, each left with the same room
   (`HISTORY_COMPACTION_TARGET_TOKENS`, 40 000 by default):
   - extractive: `compact(...)` with the conversation's memory (as the service runs it);
     the context is the summary, the pinned messages and the messages after the cut;
   - 25/75 truncation: `compact(...)` with no summariser and no memory, the baseline;
   - truncation + retention repair: the same fallback given the memory;
   - LangChain `trim_messages(strategy="last")`: the newest messages that fit.
   Targets (extractive): 100% of pinned facts, goal, open subtasks, decisions and
   recurring errors; at least 80% of the other seeded facts (paths, numbers, errors).
1r. The ratio view: the summary sized at 10 % and at 5 % of the tokens it covers (the
   newest `--tail` tokens, 2 000 by default, kept verbatim after it), the same methods
   left the same room. Targets (extractive): at 10 %, must-keep classes 100 % and the
   other seeded facts >= 95 %; at 5 %, must-keep 100 % and others >= 80 %. And the
   provenance check (docs/provenance.md): >= 99 % of the summary's structured items cite seqs, and
   every cited seq's original holds the item's key terms (its words of 3+ letters).
1p. The same tables on sessions not written for this bench (`bench/public_sessions.py`:
   tool-use sessions rebuilt from the Berkeley Function Calling Leaderboard's multi-turn
   data, Apache-2.0, shipped in the `bfcl-eval` package), facts sampled from them after
   the fact; skipped, saying how to install it, when the package is missing.
2. Incremental compaction of a growing session: five successive compactions, each reading
   the previous summary and what is new; the time and tokens read of the 1st and the 5th,
   against one compaction of the whole history from scratch; and whether the 5th still
   holds the goal, the open subtasks, every decision and the recurring error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
# run as a script, Python puts bench/ first on sys.path, where bench/queue.py would shadow
# the standard library's `queue`; use the project root instead
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from bench.agent_sessions import (  # noqa: E402
    DOMAINS,
    Fact,
    Session,
    generate,
    sessions,
)
from contextq.history import ExtractiveSummarizer, HierarchicalMemory, Message, compact  # noqa: E402
from contextq.history.compaction import CompactionOutcome  # noqa: E402
from contextq.history.provenance import holds_terms, summary_items  # noqa: E402
from contextq.settings import Settings  # noqa: E402

CLASSES = (
    "pinned",
    "goal",
    "open subtask",
    "decision",
    "recurring error",
    "file path",
    "number",
    "error message",
)
MUST_KEEP = CLASSES[:5]
METHODS = ("extractive", "truncation 25/75", "truncation + repair", "trim_messages (last)")


def message_text(message: Message) -> str:
    parts = [message.text()]
    for call in message.tool_calls or ():
        function = call.get("function") or {}
        parts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(parts)


def compacted_context(messages: Sequence[Message], outcome: CompactionOutcome | None) -> str:
    if outcome is None:
        return "\n".join(message_text(m) for m in messages)
    verbatim = set(outcome.verbatim_ids)
    kept = [m for m in messages if m.id in verbatim or m.seq > outcome.through_seq]
    return outcome.summary + "\n" + "\n".join(message_text(m) for m in kept)


def trimmed_context(messages: Sequence[Message], budget: int) -> str:
    from langchain_core.messages import trim_messages

    from bench.history import to_langchain

    lc_messages, counts = to_langchain(messages)
    kept = trim_messages(
        lc_messages,
        max_tokens=budget,
        strategy="last",
        include_system=True,
        token_counter=lambda batch: sum(counts[str(m.id)] for m in batch),
    )
    ids = {m.id for m in kept}
    return "\n".join(message_text(m) for m in messages if m.id in ids)


def present(fact: Fact, context: str) -> bool:
    if fact.regex:
        return re.search(fact.needle, context, re.I) is not None
    return fact.needle in context


def contexts(session: Session, settings: Settings) -> dict[str, str]:
    msgs = session.messages
    extractive = compact(msgs, ExtractiveSummarizer(), settings, memory=session.memory)
    truncation = compact(msgs, None, settings)
    repaired = compact(msgs, None, settings, memory=session.memory)
    return {
        "extractive": compacted_context(msgs, extractive),
        "truncation 25/75": compacted_context(msgs, truncation),
        "truncation + repair": compacted_context(msgs, repaired),
        "trim_messages (last)": trimmed_context(msgs, settings.HISTORY_COMPACTION_TARGET_TOKENS),
    }


def retention_section(
    runs: list[Session], settings: Settings, label: str
) -> dict[str, dict[str, float]]:
    tokens = [_tokens(s.messages) for s in runs]
    print(
        f"\n1{label}. Retention by fact class: {len(runs)} sessions of"
        f" {min(tokens):,}-{max(tokens):,} tokens ({min(len(s.messages) for s in runs)}+"
        f" messages), {len(DOMAINS)} domains x 3 output styles; every method left"
        f" {settings.HISTORY_COMPACTION_TARGET_TOKENS:,} tokens"
    )
    found: dict[str, dict[str, list[bool]]] = {m: defaultdict(list) for m in METHODS}
    for session in runs:
        texts = contexts(session, settings)
        for method, text in texts.items():
            for fact in session.facts:
                found[method][fact.kind].append(present(fact, text))
    shares = {
        method: {kind: sum(hits) / len(hits) for kind, hits in by_kind.items()}
        for method, by_kind in found.items()
    }
    counts = {kind: len(found["extractive"][kind]) for kind in CLASSES}
    header = f"{'fact class':<16}{'n':>5}" + "".join(f"{m:>23}" for m in METHODS)
    print(header)
    for kind in CLASSES:
        row = f"{kind:<16}{counts[kind]:>5}"
        row += "".join(f"{shares[m].get(kind, 0.0):>22.0%} " for m in METHODS)
        print(row)
    for method in METHODS:
        must = min(shares[method][k] for k in MUST_KEEP)
        other = _pooled(found[method], CLASSES[5:])
        print(f"   {method:<22} must-keep classes min {must:.0%}; other seeded facts {other:.0%}")
    must = min(shares["extractive"][k] for k in MUST_KEEP)
    other = _pooled(found["extractive"], CLASSES[5:])
    verdict = "met" if must == 1.0 and other >= 0.8 else "MISSED"
    print(f"   target (extractive): must-keep 100%, others >= 80%: {verdict}")
    return shares


def _pooled(by_kind: dict[str, list[bool]], kinds: Sequence[str]) -> float:
    hits = [h for k in kinds for h in by_kind[k]]
    return sum(hits) / len(hits) if hits else float("nan")


# ---------------------------------------------------------------- the ratio view

RATIO_TARGETS = {0.10: 0.95, 0.05: 0.80}  # others' share the extractive summary must keep


def ratio_contexts(session: Session, ratio: float, tail: int) -> tuple[dict[str, str], Any]:
    """Every method's context with the summary at `ratio` of what it covers and the newest
    `tail` tokens verbatim; and the extractive outcome (for the provenance check)."""
    msgs, settings = session.messages, Settings()
    room = {"summary_ratio": ratio, "keep_recent_tokens": tail, "target_tokens": 2 * tail}
    extractive = compact(msgs, ExtractiveSummarizer(), settings, memory=session.memory, **room)
    truncation = compact(msgs, None, settings, **room)
    repaired = compact(msgs, None, settings, memory=session.memory, **room)
    assert extractive is not None
    kept = sum(m.token_count or 0 for m in msgs if m.seq > extractive.through_seq)
    budget = int(ratio * (extractive.original_tokens - kept)) + tail
    texts = {
        "extractive": compacted_context(msgs, extractive),
        "truncation 25/75": compacted_context(msgs, truncation),
        "truncation + repair": compacted_context(msgs, repaired),
        "trim_messages (last)": trimmed_context(msgs, budget),
    }
    return texts, extractive


def fact_table(found: dict[str, dict[str, list[bool]]]) -> dict[str, dict[str, float]]:
    """Print the shares by fact class and method; returns them."""
    shares = {
        method: {kind: sum(hits) / len(hits) for kind, hits in by_kind.items() if hits}
        for method, by_kind in found.items()
    }
    header = f"{'fact class':<16}{'n':>5}" + "".join(f"{m:>23}" for m in METHODS)
    print(header)
    for kind in CLASSES:
        count = len(found["extractive"][kind])
        row = f"{kind:<16}{count:>5}"
        for method in METHODS:
            share = shares[method].get(kind)
            row += f"{share:>22.0%} " if share is not None else f"{'-':>22} "
        print(row)
    for method in METHODS:
        must = min((shares[method][k] for k in MUST_KEEP if k in shares[method]), default=1.0)
        other = _pooled(found[method], CLASSES[5:])
        print(f"   {method:<22} must-keep classes min {must:.0%}; other seeded facts {other:.0%}")
    return shares


def provenance_check(outcomes: list[tuple[CompactionOutcome, Sequence[Message]]]) -> bool:
    """>= 99 % of structured items cite seqs; every cited original holds the item's words."""
    items = cited = held = 0
    misses: list[str] = []
    unsourced: list[str] = []
    for outcome, messages in outcomes:
        originals = {m.seq: message_text(m).lower() for m in messages}
        for item in summary_items(outcome.summary):
            items += 1
            cited += bool(item.seqs)
            if not item.seqs and len(unsourced) < 3:
                unsourced.append(item.line[:90])
            for seq in item.seqs:
                ok = seq in originals and holds_terms(originals[seq], item.content)
                held += ok
                if not ok and len(misses) < 3:
                    misses.append(f"{item.line[:90]!r} -> #{seq}")
    citations = sum(len(i.seqs) for o, _ in outcomes for i in summary_items(o.summary))
    share, holds = cited / max(1, items), held / max(1, citations)
    met = share >= 0.99 and held == citations
    print(
        f"   provenance: {cited:,} of {items:,} structured items cite seqs ({share:.1%});"
        f" {held:,} of {citations:,} cited originals hold the item's key terms ({holds:.1%})"
        f" -> {'met' if met else 'MISSED'}"
    )
    for line in misses:
        print(f"     a cited original without the item's words: {line}")
    for line in unsourced:
        print(f"     unsourced: {line!r}")
    return met


def ratio_section(
    runs: list[Session], ratio: float, tail: int, label: str, *, ours: bool = True
) -> bool:
    covered = [_tokens(s.messages) for s in runs]
    print(
        f"\n{label}. Summary at {ratio:.0%} of the covered tokens: {len(runs)} sessions of"
        f" {min(covered):,}-{max(covered):,} tokens; the newest {tail:,} tokens kept verbatim;"
        " every method left the same room"
    )
    found: dict[str, dict[str, list[bool]]] = {m: defaultdict(list) for m in METHODS}
    outcomes = []
    sizes = []
    for session in runs:
        texts, outcome = ratio_contexts(session, ratio, tail)
        outcomes.append((outcome, session.messages))
        sizes.append((outcome.original_tokens, outcome.summary_tokens))
        for method, text in texts.items():
            for fact in session.facts:
                found[method][fact.kind].append(present(fact, text))
    read = sum(r for r, _ in sizes)
    written = sum(w for _, w in sizes)
    share = written / read
    print(f"   extractive summaries: {written:,} tokens for {read:,} covered ({share:.1%})")
    shares = fact_table(found)
    must = min((shares["extractive"][k] for k in MUST_KEEP if k in shares["extractive"]), default=1)
    other = _pooled(found["extractive"], CLASSES[5:])
    target = RATIO_TARGETS.get(ratio, 0.80)
    verdict = "met" if must == 1.0 and other >= target else "MISSED"
    whose = "target" if ours else "the generated sessions' target, for comparison"
    print(f"   {whose} (extractive): must-keep 100%, others >= {target:.0%}: {verdict}")
    return provenance_check(outcomes) and verdict == "met"


def public_section(args: argparse.Namespace) -> None:
    from bench import public_sessions

    runs, note = public_sessions.load(args.public, seed=args.seed)
    print(f"\n1p. Sessions not written for this bench: {note}")
    for label, ratio in zip(("1p-a", "1p-b"), RATIO_TARGETS, strict=True):
        if runs:
            ratio_section(runs, ratio, args.tail, label, ours=False)


def median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def growth_section(args: argparse.Namespace, settings: Settings) -> None:
    session = generate(DOMAINS[0], "swe", seed=args.seed + 100, turns=args.turns * 5)
    print(
        f"\n2. Incremental compaction: one session growing by {args.turns} turns five times"
        f" ({len(session.messages):,} messages, {_tokens(session.messages):,} tokens in the end);"
        " each compaction reads the previous summary and what is new"
    )
    memory = HierarchicalMemory()
    pending: list[Message] = []
    previous: str | None = None
    rows = []
    first = 0
    for number, end in enumerate(_stage_ends(session, 5), 1):
        pending += session.replay(memory, first, end)
        first = end + 1
        ms, out = median_ms(
            lambda p=list(pending), prev=previous: compact(
                p, ExtractiveSummarizer(), settings, memory=memory, previous_summary=prev
            ),
            args.repeat,
        )
        assert out is not None
        rows.append((number, out.original_tokens, ms, out.retention, out.repaired))
        previous = out.summary
        pending = [m for m in pending if m.seq > out.through_seq]
    print(f"{'compaction':>11}{'tokens read':>13}{'time':>11}{'retention':>11}  repaired")
    for number, read, ms, kept, repaired in rows:
        print(f"{number:>11}{read:>13,}{ms:>9.0f} ms{kept:>11.0%}  {repaired or '-'}")
    whole_ms, whole = median_ms(
        lambda: compact(session.messages, ExtractiveSummarizer(), settings, memory=memory),
        args.repeat,
    )
    assert whole is not None
    print(
        f"{'scratch':>11}{whole.original_tokens:>13,}{whole_ms:>9.0f} ms"
        "   (the whole history at once, for comparison)"
    )
    fifth_ms, first_ms = rows[4][2], rows[0][2]
    print(
        f"   5th / 1st compaction time: {fifth_ms / first_ms:.2f}x; 5th / from scratch:"
        f" {fifth_ms / whole_ms:.2f}x (cost grows with what is new)"
    )
    assert previous is not None
    _check_fifth(previous, memory)


def _tokens(messages: Sequence[Message]) -> int:
    return sum(m.token_count or 0 for m in messages)


def _stage_ends(session: Session, stages: int) -> list[int]:
    """Seqs closing each stage: equal numbers of turns, cut after a tool result."""
    msgs = session.messages
    ends = []
    for k in range(1, stages + 1):
        i = min(len(msgs) - 1, k * len(msgs) // stages - 1)
        while i < len(msgs) - 1 and msgs[i + 1].role == "tool":
            i += 1
        ends.append(msgs[i].seq)
    return ends


def _check_fifth(summary: str, memory: HierarchicalMemory) -> None:
    missing = [f"goal {memory.goal!r}"] if memory.goal and memory.goal not in summary else []
    missing += [
        f"subtask {t['name']!r}"
        for t in memory.subtasks
        if not t["done"] and f"[ ] {t['name']}" not in summary
    ]
    missing += [
        f"decision {d['decision']!r}" for d in memory.decisions if d["decision"] not in summary
    ]
    recurring = [p for p, e in memory.error_patterns.items() if e["count"] >= 3]
    missing += [f"error pattern {p!r}" for p in recurring if p not in summary]
    held = (
        f"goal, {sum(not t['done'] for t in memory.subtasks)} open subtasks,"
        f" {len(memory.decisions)} decisions, {len(recurring)} recurring errors"
    )
    verdict = "all held" if not missing else f"MISSING {missing}"
    print(f"   the 5th summary holds the {held}: {verdict}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--targets",
        type=int,
        nargs="+",
        default=[40_000, 12_000],
        help="rooms to measure (the default target, then a tight one)",
    )
    parser.add_argument("--tail", type=int, default=2_000, help="tokens kept after the summary")
    parser.add_argument(
        "--public", type=int, default=6, help="sessions rebuilt from the public data (0: none)"
    )
    parser.add_argument("--json", action="store_true", help="also print the shares as JSON")
    parser.add_argument("--quick", action="store_true", help="5 sessions, 1 timing run")
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.repeat = 5, 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} (times are wall clock)")
    runs = sessions(args.sessions, turns=args.turns, seed=args.seed)
    shares = {}
    for label, target in zip("abc", args.targets, strict=False):
        settings = Settings(HISTORY_COMPACTION_TARGET_TOKENS=target)
        shares[target] = retention_section(runs, settings, label)
    for label, ratio in zip(("1r-a", "1r-b"), RATIO_TARGETS, strict=True):
        ratio_section(runs, ratio, args.tail, label)
    if args.public:
        public_section(args)
    growth_section(args, Settings())
    if args.json:
        print(json.dumps(shares, indent=1))


if __name__ == "__main__":
    main()
