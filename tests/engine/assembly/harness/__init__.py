"""The invariant harness of the context assembly (issue 17;
docs/token-counting.md, docs/history.md#history-strategies, docs/context.md, docs/workspaces.md).

- `cases`: random conversations (`generate_case(seed)`), `files`, `text`: their parts;
  `native_turns`, `vendor_turns`: the reasoning dimension (turns in a vendor's own shape,
  with its reasoning, parsed by the real parser);
- `engine`: the one adapter that calls the engine as the service does, read by read;
- `oracle`: the independent count, the SPEC's budget, the SDKs' types; `sent`: what an
  answer holds; `reasoning`: each vendor's reasoning nodes, and whose row a node is;
- `invariants` (with `shape_checks`, `file_checks`, `prefix`, `reasoning_checks`): each
  promise a small named function (`INVARIANTS`);
- `run`: check cases, count violations per invariant, shrink a failing case (`shrink`);
- `trajectories`: recorded agent sessions run through the same invariants.

`tests/engine/assembly/harness/test_harness.py` runs 10 000 cases in CI;
`bench/context_fuzz.py --cases 100000` runs more with the same generators.
"""
