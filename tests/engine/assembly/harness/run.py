"""Run cases, collect violations per invariant, shrink one case per broken invariant.

    .venv/bin/python -m tests.engine.assembly.harness.run --cases 2000
    .venv/bin/python -m tests.engine.assembly.harness.run --seed 1234   # one case, shrunk

A case is checked read by read: every invariant over every answer, the prefix one over
each pair of consecutive answers. An engine that raises is a violation too
(`engine_raises`: the context route must never answer 5xx).
"""

from __future__ import annotations

import argparse
import logging
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from contextq.errors import ValidationFailed
from tests.engine.assembly.harness import engine
from tests.engine.assembly.harness.binding import Trajectory
from tests.engine.assembly.harness.binding_checks import BindingState
from tests.engine.assembly.harness.cases import Case, generate_case
from tests.engine.assembly.harness.invariants import INVARIANTS, Facts
from tests.engine.assembly.harness.shrink import shrink

ENGINE_RAISES = "engine_raises"
NAMES = (ENGINE_RAISES, *(i.__name__ for i in INVARIANTS))


@dataclass(slots=True)
class Violation:
    invariant: str
    seed: int
    read: int
    problems: list[str]


def check_case(case: Case, only: str | None = None) -> list[Violation]:
    """Every read of `case` judged by every invariant (or only the one named)."""
    return judge_case(case, only)[0]


def judge_case(case: Case, only: str | None = None) -> tuple[list[Violation], int]:
    """`check_case`, and how many answers of a bound trajectory were judged."""
    found: list[Violation] = []
    bound = 0
    for facts in readings(case):
        if isinstance(facts, Violation):
            found.append(facts)
            break
        bound += facts.binding is not None
        for invariant in INVARIANTS:
            if only is None or invariant.__name__ == only:
                problems = _judge(invariant, facts)
                if problems:
                    name, index = invariant.__name__, facts.read.index
                    found.append(Violation(name, case.seed, index, problems))
    return found, bound


def _read(case: Case, index: int, stored: engine.Stored) -> engine.Read | Violation | None:
    """Read `index` of `case`; None when refused (a 422 naming the field is an answer,
    not a fault), a Violation when the engine raised."""
    try:
        return engine.read(case, index, stored)
    except ValidationFailed:
        return None
    except Exception as exc:
        lines = traceback.format_exception_only(exc)[-1].strip()
        where = traceback.extract_tb(exc.__traceback__)[-1]
        problem = f"{lines} at {where.filename.split('/')[-1]}:{where.lineno} {where.name}"
        return Violation(ENGINE_RAISES, case.seed, index, [problem])


def readings(case: Case) -> Iterator[Facts | Violation]:
    """Each answer of `case`, read after read as the service reads them (then, for a
    case with a bound trajectory, each step the simulated model writes after the last
    answer, and its answer, judged by the binding oracle too), or the engine's fault."""
    work = case.copy() if case.bound is not None else case
    stored = engine.new_conversation()
    last: Facts | None = None
    for index in range(len(case.reads)):
        current = _read(work, index, stored)
        if not isinstance(current, engine.Read):
            if current is not None:
                yield current
            return
        last = Facts(current, last.read if last is not None else None)
        yield last
    trajectory = Trajectory.of(work)
    if trajectory is None or last is None or not trajectory.ready(last.read.history):
        return
    state = BindingState(trajectory)
    state.observe(last)
    opening = trajectory.opening(last.read.history)
    while trajectory.steps_done < trajectory.spec.steps:
        batch = opening or trajectory.step(last.answer, last.read.history)
        opening = None
        work.reads.append(batch)
        current = _read(work, len(work.reads) - 1, stored)
        if not isinstance(current, engine.Read):
            if current is not None:
                yield current
            return
        last = Facts(current, last.read, binding=state)
        yield last
        state.observe(last)


def _judge(invariant: Callable[[Facts], list[str]], facts: Facts) -> list[str]:
    """The invariant's findings; a check that raises on an answer counts against it
    (a long run keeps going, and the answer is kept by its seed)."""
    try:
        return invariant(facts)
    except Exception as exc:  # an answer the check did not foresee: report it
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return [f"the check raised {exc!r} at {where.filename.split('/')[-1]}:{where.lineno}"]


SEEDS_LISTED = 12  # a broken invariant's seeds the table lists


@dataclass(slots=True)
class Report:
    cases: int = 0
    answers: int = 0
    seconds: float = 0.0
    cases_by_invariant: Counter[str] = field(default_factory=Counter)
    answers_by_invariant: Counter[str] = field(default_factory=Counter)
    first: dict[str, Violation] = field(default_factory=dict)
    seeds: dict[str, list[int]] = field(default_factory=dict)  # the first few, by invariant
    bound_cases: int = 0  # cases whose bound trajectory was read
    bound_answers: int = 0  # the answers of those trajectories

    def add(self, case: Case, violations: list[Violation], bound: int = 0) -> None:
        self.cases += 1
        self.answers += len(case.reads) + bound
        self.bound_cases += bound > 0
        self.bound_answers += bound
        for name in sorted({v.invariant for v in violations}):
            self.cases_by_invariant[name] += 1
            found = self.seeds.setdefault(name, [])
            if len(found) < SEEDS_LISTED:
                found.append(case.seed)
        for v in violations:
            self.answers_by_invariant[v.invariant] += 1
            self.first.setdefault(v.invariant, v)

    @property
    def broken(self) -> list[str]:
        return [n for n in NAMES if self.cases_by_invariant[n]]

    def table(self) -> str:
        lines = [
            f"{self.cases} cases, {self.answers} answers in {self.seconds:.1f} s "
            f"({1000 * self.seconds / max(1, self.cases):.1f} ms a case); "
            f"bound trajectories: {self.bound_cases} cases, {self.bound_answers} answers",
            f"{'invariant':<30} {'cases':>8} {'answers':>8}  first seed",
        ]
        for name in NAMES:
            first = self.first.get(name)
            seed = f"{first.seed} (read {first.read})" if first else "-"
            lines.append(
                f"{name:<30} {self.cases_by_invariant[name]:>8} "
                f"{self.answers_by_invariant[name]:>8}  {seed}"
            )
        for name in self.broken:
            lines.append(f"seeds of {name}: {' '.join(map(str, self.seeds.get(name, [])))}")
        return "\n".join(lines)


def run(seeds: Iterable[int], progress: Callable[[Report], None] | None = None) -> Report:
    report = Report()
    started = time.perf_counter()
    for n, seed in enumerate(seeds, 1):
        case = generate_case(seed)
        report.add(case, *judge_case(case))
        if progress is not None and n % 1000 == 0:
            report.seconds = time.perf_counter() - started
            progress(report)
    report.seconds = time.perf_counter() - started
    return report


def minimal(invariant: str, seed: int, budget_s: float = 20.0) -> str:
    """The smallest case found that still breaks `invariant`, as text, with the problems
    it shows and how to reproduce it."""
    case = shrink(generate_case(seed), lambda c: bool(check_case(c, invariant)), budget_s)
    violations = check_case(case, invariant)
    problems = [p for v in violations for p in v.problems][:6]
    return "\n".join(
        [
            f"invariant {invariant} broken (seed {seed}; reproduce: .venv/bin/python -m "
            f"tests.engine.assembly.harness.run --seed {seed} --only {invariant})",
            *(f"  ! {p}" for p in problems),
            "minimal case:",
            case.describe(),
        ]
    )


def dump(case: Case) -> str:
    """Each answer of `case` in short: counts, limits, warnings and the list as sent."""
    out = []
    for facts in readings(case):
        if isinstance(facts, Violation):
            out.append(f"== the engine raised: {facts.problems[0]}")
            break
        a = facts.answer
        bound = " (bound trajectory)" if facts.binding is not None else ""
        out.append(
            f"== read {facts.read.index}{bound}: token_count {a['token_count']} "
            f"(recount {facts.recount}), "
            f"budget {facts.limits.budget}, hard room {facts.limits.hard}, "
            f"filtered {a['filtered']}, cut moved {facts.read.moved}"
        )
        out += [f"   warning: {w}" for w in a["warnings"]]
        out += [f"   failed/pending: {a['failed_file_ids']} {a['pending_file_ids']}"]
        for block in a.get("system") or ():
            out.append(f"   [system block] {block.get('text', '')[:90]!r}")
        for m in a["messages"]:
            parts = m["content"] if isinstance(m.get("content"), list) else [m.get("content")]
            for p in parts:
                shown = (
                    p
                    if isinstance(p, str) or p is None
                    else (
                        p.get("text")
                        or p.get("type") + " " + str(p.get("tool_use_id") or p.get("id") or "")
                    )
                )
                out.append(f"   {m['role']:<9} {str(shown)[:100]!r}")
            for call in m.get("tool_calls") or ():
                out.append(f"   {'':<9} call {call['id']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--seed", type=int, help="check this one case and shrink it")
    parser.add_argument("--only", help="one invariant's name")
    parser.add_argument("--shrink", action="store_true", help="shrink one case per invariant")
    parser.add_argument("--dump", action="store_true", help="with --seed: print each answer")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the engine warns on every pinned-alone case
    if args.seed is not None and args.dump:
        print(dump(generate_case(args.seed)))
        return 0
    if args.seed is not None:
        violations = check_case(generate_case(args.seed), args.only)
        names = sorted({v.invariant for v in violations})
        for name in names:
            print(minimal(name, args.seed), end="\n\n")
        print("holds" if not names else f"broken: {', '.join(names)}")
        return 1 if names else 0
    every = max(1000, args.cases // 10)
    cpu = time.process_time()
    report = run(
        range(args.start, args.start + args.cases),
        progress=lambda r: (
            print(f"… {r.cases} cases, {r.seconds:.0f} s", flush=True)
            if r.cases % every == 0
            else None
        ),
    )
    cpu = time.process_time() - cpu
    print(report.table())
    print(
        f"CPU {cpu:.1f} s ({1000 * cpu / max(1, report.cases):.1f} ms a case; "
        f"wall/CPU {report.seconds / max(cpu, 1e-9):.2f}: above 1, the machine was shared)"
    )
    if args.shrink:
        for name in report.broken:
            print("\n" + minimal(name, report.first[name].seed))
    return 1 if report.broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
