"""The invariant harness of the context assembly (issue 17, SPEC §3, §4, §6, §9).

- `cases`: random conversations (`generate_case(seed)`), `files`, `text`: their parts;
- `engine`: the one adapter that calls the engine as the service does, read by read;
- `oracle`: the independent count, the SPEC's budget, the SDKs' types, what was sent;
- `invariants`: each promise a small named function (`INVARIANTS`);
- `run`: check cases, count violations per invariant, shrink a failing case (`shrink`);
- `trajectories`: recorded agent sessions run through the same invariants.

`tests/engine/assembly/harness/test_harness.py` runs 10 000 cases in CI;
`bench/context_fuzz.py --cases 100000` runs more with the same generators.
"""
