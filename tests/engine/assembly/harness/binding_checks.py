"""The binding oracle (docs/context.md#bound-reasoning, issue 27): promises every answer of a
bound trajectory keeps (`binding.Trajectory` writes the steps; `canonical` defines the
prefix a reasoning node is bound to).

Judged on every answer of a case with a bound trajectory from the one its first step
was written after on (`Facts.binding`, None elsewhere: non-bound cases keep the
reasoning invariants of `reasoning_checks` alone). "Reasoning nodes" are the answer's
vendor's (Anthropic `thinking` / `redacted_thinking` blocks, Responses `reasoning`
items), each told apart by its JSON without a cache mark (`binding.node_key`); the
oracle's own are those the simulated model wrote (`Trajectory.written`).

- `binding_prefix_kept`: an oracle node is sent after the prefix it was written after
  (its prefix hash is its signature); any other node is sent after the same prefix each
  time (its true prefix is one value: two different ones cannot both be right).
- `binding_no_gap`: of the previous answer's nodes, in order, those left out now are
  none, a run from the start, a run from the end, or all — never one from the middle.
- `binding_never_back`: a node once left out (of an answer that sent it before, or that
  sent its step without it) is never sent again.
- `binding_newest_sent`: when nothing before the newest step changed (its prefix hash
  is its leading node's signature), the newest step's reasoning is sent.
- `binding_dropped_counted`: `reasoning_dropped.prefix_changed` counts the vendor's
  reasoning left out of the rows the answer holds, and when it is not 0 a warning names
  the count and says thinking (or reasoning) was left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.engine.assembly.harness.binding import Trajectory
from tests.engine.assembly.harness.canonical import FIELDS, dumps, prefix_hash, strip_element
from tests.engine.assembly.harness.facts import Facts
from tests.engine.assembly.harness.reasoning import owner_of, units

SAYS_REASONING = re.compile(r"thinking|reasoning", re.IGNORECASE)


@dataclass(slots=True)
class BindingState:
    """What the oracle remembers of a trajectory's answers so far."""

    trajectory: Trajectory
    read: int = -1  # the last answer observed
    previous: list[str] | None = None  # its reasoning nodes, in order
    gone: dict[str, int] = field(default_factory=dict)  # node -> the read it left at
    first_prefix: dict[str, str] = field(default_factory=dict)  # others: prefix hash

    def observe(self, f: Facts) -> None:
        """Remember answer `f` (after it was judged)."""
        keys = [n.key for n in f.reasoning_prefixes]
        now = set(keys)
        # left out: sent before and not now, or its step sent without it; a step this
        # answer does not send at all (its turn did not fit, a pinned-only answer) was
        # never sent, so sending it later puts nothing back (`binding_prefix_kept`
        # still judges the prefix it then follows)
        sent_steps = {w.seq for w in self.trajectory.written.values()}
        sent_steps = {seq for seq in sent_steps if _step_index(f.answer, seq) is not None}
        written = [k for k, w in self.trajectory.written.items() if w.seq in sent_steps]
        for key in [*(self.previous or ()), *written]:
            if key not in now:
                self.gone.setdefault(key, f.read.index)
        for n in f.reasoning_prefixes:
            if n.key not in self.trajectory.written:
                self.first_prefix.setdefault(n.key, n.hash)
        self.previous, self.read = keys, f.read.index


def _name(state: BindingState, key: str, fmt: str, node: Any = None) -> str:
    w = state.trajectory.written.get(key)
    if w is not None:
        return f"m{w.seq}'s reasoning #{w.k}"
    seq = owner_of(fmt, node) if node is not None else None
    return f"m{seq}'s reasoning (stored)" if seq is not None else "a stored reasoning node"


def binding_prefix_kept(f: Facts) -> list[str]:
    """Every reasoning node sent sits after the prefix it was written after."""
    state = f.binding
    if state is None:
        return []
    problems: list[str] = []
    fmt = f.answer["format"]
    told = False
    for n in f.reasoning_prefixes:
        w = state.trajectory.written.get(n.key)
        want = w.signature if w is not None else state.first_prefix.get(n.key)
        if want is None or want == n.hash:
            continue
        where = ""  # where it changed, once (what the engine's author needs to see)
        if w is not None and not told:
            where, told = _first_difference(f, state, n.index, w.seq), True
        problems.append(f"{_name(state, n.key, fmt, n.node)} sent after another prefix{where}")
    return problems


def _first_difference(f: Facts, state: BindingState, index: int, seq: int) -> str:
    """Where this answer's prefix first differs from the answer step `seq` was written
    after."""
    read = state.trajectory.read_by.get(seq)
    if read is None:
        return ""
    fmt = f.answer["format"]
    others, list_key, _ = FIELDS[fmt]
    for name in others:
        if prefix_hash({"format": fmt, name: read.get(name)}, 0) != prefix_hash(
            {"format": fmt, name: f.answer.get(name)}, 0
        ):
            return f" (its {name} changed)"
    was = _canonical_list(fmt, read[list_key])
    now = _canonical_list(fmt, f.answer[list_key][:index])
    for k, (a, b) in enumerate(zip(was, now, strict=False)):
        if a != b:
            return f" (canonical {list_key}[{k}] changed: {_where(dumps(a), dumps(b))})"
    return f" (canonical {list_key}: {len(was)} elements when written, {len(now)} now)"


def _canonical_list(fmt: str, elements: list[Any]) -> list[Any]:
    return [e for e in (strip_element(fmt, e) for e in elements) if e is not None]


def _where(was: str, now: str, around: int = 50) -> str:
    """The first difference of two JSON texts, with a little of what surrounds it."""
    at = next((i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), None)
    at = min(len(was), len(now)) if at is None else at
    start = max(0, at - around)
    return f"at char {at}: …{was[start : at + around]!r} -> …{now[start : at + around]!r}"


def binding_no_gap(f: Facts) -> list[str]:
    """Compared with the previous answer, reasoning leaves only as a run from the start,
    a run from the end, or all of it."""
    state = f.binding
    if state is None or not state.previous:
        return []
    now = {n.key for n in f.reasoning_prefixes}
    prev = state.previous
    left = [i for i, key in enumerate(prev) if key not in now]
    n = len(left)
    if not n or n == len(prev) or left == list(range(n)):
        return []
    if left == list(range(len(prev) - n, len(prev))):
        return []
    return [
        f"of the previous answer's {len(prev)} reasoning nodes, #{left} are left out "
        "(kept ones on both sides): a gap"
    ]


def binding_never_back(f: Facts) -> list[str]:
    """A reasoning node once left out is never sent again."""
    state = f.binding
    if state is None:
        return []
    fmt = f.answer["format"]
    return [
        f"{_name(state, n.key, fmt, n.node)}, left out at read {state.gone[n.key]}, is sent again"
        for n in f.reasoning_prefixes
        if n.key in state.gone
    ]


def binding_newest_sent(f: Facts) -> list[str]:
    """When the prefix the newest step was written after is unchanged, its reasoning
    is sent."""
    state = f.binding
    t = state.trajectory if state is not None else None
    if t is None or t.newest_seq is None or not t.newest:
        return []
    index = _step_index(f.answer, t.newest_seq)
    if index is None:
        return []  # the step is not sent at all (newest_present judges that)
    signature = t.written[t.newest[0]].signature
    if f.canonical is None or f.canonical.starts[index] != signature:
        return []  # its prefix changed: the binding rule leaves its reasoning out
    sent = {n.key for n in f.reasoning_prefixes}
    missing = [t.written[k].k for k in t.newest if k not in sent]
    if not missing:
        return []
    return [f"m{t.newest_seq}'s reasoning #{missing} left out though its prefix is unchanged"]


def _step_index(answer: dict[str, Any], seq: int) -> int | None:
    """The list element where step `seq` starts in the answer (Anthropic: its assistant
    message; Responses: its first item)."""
    fmt = answer["format"]
    _, list_key, key = FIELDS[fmt]
    for i, element in enumerate(answer.get(list_key) or ()):
        nodes = element.get(key) if key is not None else [element]
        if isinstance(nodes, list) and any(owner_of(fmt, n) == seq for n in nodes):
            return i
    return None


def binding_dropped_counted(f: Facts) -> list[str]:
    """`reasoning_dropped.prefix_changed` counts the reasoning left out of the rows the
    answer holds (a bound target keeps earlier turns': all of it is the binding
    rule's), and a warning says so."""
    if f.binding is None:
        return []
    dropped = f.answer.get("reasoning_dropped")
    if not isinstance(dropped, dict) or not isinstance(dropped.get("prefix_changed"), int):
        return [f"reasoning_dropped is {dropped!r}: no prefix_changed count"]
    want = 0
    for m in f.visible:
        if m.native is None or not f.own_vendor(m) or not f.present(m):
            continue
        total = units(m.native.format, m.native.payload)
        walked = f.walked.get(m.seq)
        want += walked.left if walked is not None else total
    got = dropped["prefix_changed"]
    problems = []
    if got != want:
        problems.append(f"reasoning_dropped.prefix_changed {got}, the rows sent leave out {want}")
    if got and not any(
        str(got) in w and SAYS_REASONING.search(w) for w in f.answer.get("warnings") or ()
    ):
        problems.append(f"prefix_changed {got} and no warning names it")
    return problems


BINDING_INVARIANTS = (
    binding_prefix_kept,
    binding_no_gap,
    binding_never_back,
    binding_newest_sent,
    binding_dropped_counted,
)
BINDING_NAMES = tuple(i.__name__ for i in BINDING_INVARIANTS)
