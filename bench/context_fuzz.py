"""The context assembly's invariants over many generated conversations (issue 17).

    .venv/bin/python bench/context_fuzz.py          # 100 000 cases: about 35 min of one core
    .venv/bin/python bench/context_fuzz.py --cases 2000 --start 50000 --shrink

The same generators, invariants and command line as tests/engine/assembly/harness/
(`python -m tests.engine.assembly.harness.run`; the CI run checks seeds 0…9 999, so
`--start 10000` looks where CI does not), with 100 000 cases unless `--cases` or
`--seed` is given. Prints the cases and answers checked (and, of them, the bound
trajectories and their answers: the binding oracle's, docs/harness.md), the time (wall
and CPU: the machine is shared, CPU is the figure to compare), and for each invariant
the cases and answers that broke it with the first seed; `--shrink` adds the smallest
case found for each broken invariant. Exit status 1 when any invariant broke (the
binding invariants included, whatever `CONTEXTQ_BINDING_ORACLE` says: it gates CI's
tests only).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.engine.assembly.harness.run import main as run_main  # noqa: E402

DEFAULT_CASES = 100_000


def main(argv: list[str]) -> int:
    if not any(a.startswith(("--cases", "--seed")) for a in argv):
        argv = ["--cases", str(DEFAULT_CASES), *argv]
    return run_main(argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
