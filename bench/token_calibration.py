"""Calibrated counts for closed tokenizers (issue 21, docs/token-counting.md): the exact OpenAI
counts and the calibrated counts per model family on a fixed corpus of prose, code, JSON and
CJK (bench/token_calibration_corpus.py: texts that ship with Python, or made here).

    .venv/bin/python bench/token_calibration.py            # a few seconds
    .venv/bin/python bench/token_calibration.py --quick    # fewer timing repeats

1. Per sample, counted as the context counts it (the message's compact JSON): cl100k
   and o200k exactly (the baseline), the kinds found, and the calibrated count of each
   family (contextq.calibration), with its ratio to cl100k.
2. Where each factor comes from: every published figure converted to "Claude (or Gemini)
   tokens per cl100k token" with this corpus' own characters-per-token ratios (and its
   o200k/cl100k ratio where the two encodings differ by more than 1 %: CJK), beside the
   factor taken (the upper end, rounded up to 0.05). A factor below one of its sources
   would be a bug: the script says MET or MISSED.
3. The cost of finding the kinds against the cost of counting (per 100 KB), since a
   context read finds them for every text it counts that it has not seen.
4. The engine's context of a 10 000-message agent history (forced filter) for
   claude-sonnet-4-5, calibrated against the same model counted exactly (its family
   switched off for the baseline, in this process only), runs interleaved: what the
   calibration costs a warm read. bench/context.py measures the same over HTTP.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.token_calibration_corpus import Sample, as_message, corpus  # noqa: E402
from contextq import calibration as cal  # noqa: E402
from contextq.tokens import count_tokens  # noqa: E402

FAMILIES = ("claude", "claude-2026", "gemini", "other")
KIND_OF = {"prose": "prose", "code": "code", "json": "json", "cjk": "cjk"}

# Published figures (contextq/calibration.py's sources), each as (source, figure, base):
# base "cl100k"/"o200k": a ratio over that encoding; "per500": tokens per 500 characters
# (of the kind's samples, or of one sample: "per500:ko");
# "premium": over the older Claude tokenizer (the 2026 family multiplies Claude's by it).
CLAUDE_FIGURES: dict[str, list[tuple[str, float, str]]] = {
    "prose": [("[A] 15-20 %", 1.20, "o200k"), ("[B] ingest", 1.18, "o200k"),
              ("[D] English", 118, "per500"), ("[E] 10-20 %", 1.20, "o200k")],
    "code": [("[B] ingest", 1.18, "o200k"), ("[D] Python", 161, "per500"),
             ("[E] 10-20 %", 1.20, "o200k")],
    "json": [("[B] ingest", 1.18, "o200k"), ("[C] chonkometer", 1.26, "cl100k"),
             ("[D] JSON", 198, "per500")],
    "cjk": [("[A] 'much more'", 1.20, "cl100k"), ("[D] Korean", 312, "per500:ko")],
}  # fmt: skip
PREMIUMS: dict[str, list[tuple[str, float]]] = {
    "prose": [("[F]", 1.59), ("[G]", 1.45), ("[H] docs", 1.47)],
    "code": [("[F] Python", 1.156), ("[G] up to", 1.33), ("[H] up to", 1.39)],
    "json": [("[F] minified", 1.34), ("[G] log line", 1.31)],
    "cjk": [("[F]", 1.00), ("[G]", 1.00), ("[H] up to", 1.07)],
}
GEMINI_FIGURES: dict[str, list[tuple[str, float, str]]] = {
    "prose": [("[I] 5-10 %", 1.10, "o200k"), ("[J] dex", 1.08, "o200k")],
    "code": [],
    "json": [],
    "cjk": [("[I] below o200k", 1.00, "o200k")],
}


def _measure(samples: list[Sample]) -> list[dict[str, object]]:
    rows = []
    for sample in samples:
        text = as_message(sample)
        row: dict[str, object] = {
            "kind": sample.kind,
            "name": sample.name,
            "chars": len(sample.text),
            "cl100k": count_tokens(text, "cl100k_base"),
            "o200k": count_tokens(text, "o200k_base"),
            "found": "+".join(k for k in cal.kinds(text) if k != "prose") or "prose",
            "raw_cl100k": count_tokens(sample.text, "cl100k_base"),
            "raw_o200k": count_tokens(sample.text, "o200k_base"),
        }
        for family in FAMILIES:
            row[family] = count_tokens(text, f"cl100k_base+{family}")
        rows.append(row)
    return rows


def _print_counts(rows: list[dict[str, object]]) -> None:
    print("1. Counts of each sample as a message (compact JSON), exact and calibrated")
    head = f"{'kind':<6} {'sample':<22} {'chars':>7} {'cl100k':>7} {'o200k':>7} {'kinds':<10}"
    print(head + "".join(f" {f:>12}" for f in FAMILIES))
    for kind in ("prose", "code", "json", "cjk"):
        group = [r for r in rows if r["kind"] == kind]
        for r in [*group, _total(kind, group)]:
            line = (
                f"{r['kind']:<6} {r['name']:<22} {r['chars']:>7} {r['cl100k']:>7} "
                f"{r['o200k']:>7} {r['found']:<10}"
            )
            for family in FAMILIES:
                ratio = int(r[family]) / max(1, int(r["cl100k"]))  # type: ignore[call-overload]
                line += f" {r[family]:>6} {ratio:>4.2f}x"
            print(line)
    print("(ratios: calibrated / cl100k; the exact OpenAI counts are the baseline)")


def _total(kind: str, group: list[dict[str, object]]) -> dict[str, object]:
    keys = ("chars", "cl100k", "o200k", "raw_cl100k", "raw_o200k", *FAMILIES)
    total: dict[str, object] = {"kind": kind, "name": "= all", "found": ""}
    for key in keys:
        total[key] = sum(int(r[key]) for r in group)  # type: ignore[call-overload]
    return total


# a figure over o200k is read as over cl100k where the two agree within this (Latin-script
# text: within 1 % on this corpus, finer than the figures' own two digits); else converted
SAME_ENCODINGS = 0.01


def _as_cl100k(figure: float, base: str, kind_total: dict[str, object]) -> float:
    """A published figure as tokens per cl100k token, with this corpus' ratios."""
    cl100k = int(kind_total["raw_cl100k"])  # type: ignore[call-overload]
    if base == "cl100k":
        return figure
    if base == "o200k":
        ratio = int(kind_total["raw_o200k"]) / cl100k  # type: ignore[call-overload]
        return figure if abs(ratio - 1) <= SAME_ENCODINGS else figure * ratio
    per500 = cl100k * 500 / int(kind_total["chars"])  # base "per500" or "per500:<sample>"  # type: ignore[call-overload]
    return figure / per500


def _of(base: str, kind: str, rows: list[dict[str, object]]) -> dict[str, object]:
    """The rows a figure is compared with: the kind's, or one sample's ("per500:ko")."""
    name = base.partition(":")[2]
    return _total(kind, [r for r in rows if r["kind"] == kind and name in ("", r["name"])])


def _print_derivation(rows: list[dict[str, object]]) -> bool:
    print("\n2. Every published figure over cl100k on this corpus, beside the factor taken")
    totals = {k: _total(k, [r for r in rows if r["kind"] == k]) for k in KIND_OF}
    ok = True
    for kind, figures in CLAUDE_FIGURES.items():
        converted = [
            (name, _as_cl100k(f, base, _of(base, kind, rows))) for name, f, base in figures
        ]
        taken = cal.CLAUDE.hundredths[kind] / 100  # type: ignore[index]
        ok &= all(value <= taken + 1e-9 for _, value in converted if value >= 1)
        shown = ", ".join(f"{n} {v:.2f}" for n, v in converted)
        print(f"claude      {kind:<6} {shown}  -> {taken:.2f}")
        highest = max(p for _, p in PREMIUMS[kind])
        new = cal.CLAUDE_2026.hundredths[kind] / 100  # type: ignore[index]
        ok &= taken * highest <= new + 1e-9
        premiums = ", ".join(f"{n} {p:.2f}" for n, p in PREMIUMS[kind])
        print(f"claude-2026 {kind:<6} {taken:.2f} x the highest premium ({premiums})  -> {new:.2f}")
    for kind, figures in GEMINI_FIGURES.items():
        converted = [(name, _as_cl100k(f, base, totals[kind])) for name, f, base in figures]
        taken = cal.GEMINI.hundredths[kind] / 100  # type: ignore[index]
        ok &= all(value <= taken + 1e-9 for _, value in converted)
        shown = ", ".join(f"{n} {v:.2f}" for n, v in converted) or "none published: Claude's"
        print(f"gemini      {kind:<6} {shown}  -> {taken:.2f}")
    print(
        "o200k / cl100k on this corpus: "
        + ", ".join(
            f"{k} {int(t['raw_o200k']) / int(t['raw_cl100k']):.3f}"  # type: ignore[call-overload]
            for k, t in totals.items()
        )
    )
    print(f"every factor at or above its sources: {'MET' if ok else 'MISSED'}")
    return ok


def _per_100kb(func: object, texts: list[str], repeats: int) -> float:
    size = sum(len(t) for t in texts)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for text in texts:
            func(text)  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6 * 100_000 / size


def _print_speed(samples: list[Sample], repeats: int) -> None:
    texts = [as_message(s) for s in samples]
    kinds_us = _per_100kb(cal.kinds, texts, repeats)
    count_us = _per_100kb(lambda t: count_tokens(t, "cl100k_base"), texts, repeats)
    print("\n3. Finding the kinds against counting, per 100 KB of this corpus (median)")
    print(f"kinds(): {kinds_us:,.0f} us; cl100k count: {count_us:,.0f} us; "
          f"ratio {kinds_us / count_us:.3f}x")  # fmt: skip


def _assembly_cost(repeats: int) -> None:
    import contextq.catalog as catalog
    from contextq.assembly import build_history_context
    from contextq.history import Message, count_message_tokens
    from contextq.settings import Settings
    from tests.api.history_data import agent_history

    model = "claude-sonnet-4-5"
    history = agent_history(10_000, pinned=5)
    settings = Settings()

    def stored(tag: str) -> list[Message]:
        out = []
        for seq, data in enumerate(history, start=1):
            wire = {k: v for k, v in data.items() if k not in ("pinned", "kind")}
            message = Message.from_openai(
                wire, id=f"{tag}-{seq}", seq=seq, pinned=bool(data.get("pinned"))
            )
            message.token_count = count_message_tokens(message, model)
            out.append(message)
        return out

    real = catalog.family_for
    runs: dict[str, list[float]] = {"exact": [], "calibrated": []}
    messages = {tag: stored(tag) for tag in runs}
    total = sum(m.token_count or 0 for m in messages["exact"])
    kept = {}
    try:
        for _ in range(repeats):
            for tag, times in runs.items():
                catalog.family_for = real if tag == "calibrated" else (lambda _p, _m: None)
                started = time.perf_counter()
                answer = build_history_context(
                    messages[tag], settings=settings, model=model, history_tokens=total,
                    force_filter=True,
                )  # fmt: skip
                times.append((time.perf_counter() - started) * 1000)
                kept[tag] = answer.report["kept_message_count"]
    finally:
        catalog.family_for = real
    print(f"\n4. The context of a 10 000-message history for {model}, forced filter, warm")
    for tag, times in runs.items():
        warm = times[2:]
        print(
            f"{tag:<10} min {min(warm):6.1f} ms  p50 {statistics.median(warm):6.1f} ms  "
            f"kept {kept[tag]} messages"
        )
    ratio = min(runs["calibrated"][2:]) / min(runs["exact"][2:])
    median = statistics.median(runs["calibrated"][2:]) / statistics.median(runs["exact"][2:])
    print(f"calibrated / exact: {ratio:.2f}x (min), {median:.2f}x (p50)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples = corpus()
    rows = _measure(samples)
    _print_counts(rows)
    _print_derivation(rows)
    _print_speed(samples, 5 if args.quick else 30)
    _assembly_cost(8 if args.quick else 40)


if __name__ == "__main__":
    main()
