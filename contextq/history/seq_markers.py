"""The marker ending a summary item (docs/provenance.md): the seqs of the messages it came from,
`(#12)` or `(#12, #40)`, or `(#?)` while its source is unknown.

- `cite(seqs)` renders it: sorted, and past `MAX_CITED` the oldest one, `…` and the
  newest ones (`ELIDED` in a seq tuple stands for the `…` of a parsed marker, so a summary
  of summaries keeps saying that there were more);
- `merge_seqs(*groups)` is the union of merged items, capped the same way;
- `split_cited(line)` takes the marker off a line.

A leaf: the summary format, the harvest and the memory write markers with it, and
`provenance` checks them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_CITED = 8
ELIDED = -1  # the "…" of a capped marker, kept through a parse
UNSOURCED = " (#?)"

_CITE = re.compile(r"\s\((#\?|(?:#-?\d+|…)(?:, (?:#-?\d+|…))*)\)\s*$")


def cite(seqs: Iterable[int]) -> str:
    """` (#3, #9)`; ` (#?)` when there is none; past MAX_CITED (or when a parsed marker
    had one) the oldest, `…`, then the newest: ` (#3, …, #84, #85, #86, #87, #88, #89, #90)`."""
    given = tuple(seqs)
    real = sorted({s for s in given if s >= 0})
    if not real:
        return UNSOURCED
    elided = ELIDED in given or len(real) > MAX_CITED
    if len(real) > MAX_CITED:
        real = [real[0], *real[-(MAX_CITED - 1) :]]
    if not elided:
        return " (" + ", ".join(f"#{s}" for s in real) + ")"
    return f" (#{real[0]}, …" + "".join(f", #{s}" for s in real[1:]) + ")"


def merge_seqs(*groups: Iterable[int]) -> tuple[int, ...]:
    """The union of `groups`, capped: the oldest, then the newest, `ELIDED` for the rest."""
    every = {s for group in groups for s in group}
    real = sorted(s for s in every if s >= 0)
    elided = ELIDED in every or len(real) > MAX_CITED
    if len(real) > MAX_CITED:
        real = [real[0], *real[-(MAX_CITED - 1) :]]
    return (*real, ELIDED) if elided else tuple(real)


def split_cited(line: str) -> tuple[str, tuple[int, ...], bool]:
    """(the line without its marker, its seqs, whether it had a marker at all)."""
    match = _CITE.search(line)
    if match is None:
        return line.rstrip(), (), False
    seqs: list[int] = []
    for part in match.group(1).split(", "):
        if part == "…":
            seqs.append(ELIDED)
        elif part != "#?":
            seqs.append(int(part[1:]))
    return line[: match.start()].rstrip(), tuple(seqs), True
