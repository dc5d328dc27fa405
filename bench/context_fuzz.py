"""The context assembly's invariants over many generated conversations (issue 17).

    .venv/bin/python bench/context_fuzz.py --cases 100000          # about 20 min of one core
    .venv/bin/python bench/context_fuzz.py --cases 2000 --start 50000 --shrink

The same generators and invariants as tests/engine/assembly/harness/ (the CI run checks
seeds 0…9 999; pass `--start 10000` to look where CI does not). Prints the cases and
answers checked, the time (wall and CPU: the machine is shared, CPU is the figure to
compare), and for each invariant the cases and answers that broke it with the first
seed; `--shrink` adds the smallest case found for each broken invariant. Exit status 1
when any invariant broke.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.engine.assembly.harness.run import minimal, run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--shrink", action="store_true", help="a minimal case per invariant")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the engine warns on every pinned-alone case
    cpu = time.process_time()
    report = run(
        range(args.start, args.start + args.cases),
        progress=lambda r: (
            print(f"… {r.cases} cases, {r.seconds:.0f} s", flush=True)
            if r.cases % 10_000 == 0
            else None
        ),
    )
    cpu = time.process_time() - cpu
    print(report.table())
    print(
        f"CPU {cpu:.1f} s ({1000 * cpu / max(1, report.cases):.1f} ms a case; "
        f"wall/CPU {report.seconds / max(cpu, 1e-9):.2f})"
    )
    if args.shrink:
        for name in report.broken:
            print("\n" + minimal(name, report.first[name].seed))
    return 1 if report.broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
