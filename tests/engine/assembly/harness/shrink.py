"""Shrinking a failing case: greedy, biggest cuts first (delta debugging over the
history's units), keeping the first smaller case that still fails, until none does or
the time is up. Every candidate is a valid conversation: tool chains go whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from contextq.history import Message
from contextq.history.chains import unit_at
from tests.engine.assembly.harness.cases import Case
from tests.engine.assembly.harness.text import MARKER


def shrink(case: Case, fails: Callable[[Case], bool], budget_s: float = 20.0) -> Case:
    deadline = time.monotonic() + budget_s
    best = case
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for candidate in _candidates(best):
            if time.monotonic() > deadline:
                break
            if fails(candidate):
                best, improved = candidate, True
                break
    return best


def _candidates(case: Case) -> Iterator[Case]:
    if case.bound is not None and case.bound.steps > 1:  # a shorter bound trajectory
        for steps in sorted({1, case.bound.steps // 2, case.bound.steps - 1}):
            yield case.copy(bound=replace(case.bound, steps=steps))
    for k in range(1, len(case.reads)):
        yield case.copy(reads=case.reads[:k])
    yield from _fewer_units(case)
    yield from _simpler_settings(case)
    yield from _fewer_files(case)
    yield from _shorter_texts(case)


def _units(messages: list[Message]) -> list[list[int]]:
    out, i = [], 0
    while i < len(messages):
        unit = unit_at(messages, i)
        span = list(range(unit.start, unit.end + 1))
        out.append(span)
        i = unit.end + 1
    return out


def _fewer_units(case: Case) -> Iterator[Case]:
    history = case.reads[0]
    units = _units(history)
    size = len(units) // 2
    while size >= 1:
        for start in range(0, len(units), size):
            gone = {i for u in units[start : start + size] for i in u}
            kept = [m for i, m in enumerate(history) if i not in gone]
            if kept and len(kept) < len(history):
                yield _with_history(case, kept)
        size //= 2


def _with_history(case: Case, history: list[Message]) -> Case:
    out = case.copy()
    out.reads[0] = [replace(m) for m in history]
    return out


def _simpler_settings(case: Case) -> Iterator[Case]:
    for change in (
        {"project": None},
        {"compaction": None},
        {"tools": None},
        {"threshold": None},
        {"force_filter": False},
        {"skip_filter": False},
    ):
        key, value = next(iter(change.items()))
        if getattr(case, key) != value:
            yield case.copy(**change)
    for key in case.options:
        yield case.copy(options={k: v for k, v in case.options.items() if k != key})
    p = case.prompts
    for simpler in (
        replace(p, custom_agent_prompt=None, replace_system_prompt=False),
        replace(p, reminders=()),
        replace(p, system_prompt="You are a careful agent.", owner_system_prompt=None),
        replace(p, timezone=None, datetime_granularity="day"),
    ):
        if simpler != p:
            yield case.copy(prompts=simpler)
    if case.format != "openai":
        yield case.copy(format="openai")


def _fewer_files(case: Case) -> Iterator[Case]:
    for r, batch in enumerate(case.reads):
        for j, m in enumerate(batch):
            for keep in ([], *([f for f in m.file_ids if f != x] for x in m.file_ids)):
                if len(keep) < len(m.file_ids):
                    out = case.copy()
                    out.reads[r][j].file_ids = list(keep)
                    yield out
                    if not keep:
                        break


def _shorter_texts(case: Case) -> Iterator[Case]:
    sized = sorted(
        ((len(m.text()), r, j) for r, batch in enumerate(case.reads) for j, m in enumerate(batch)),
        reverse=True,
    )
    for length, r, j in sized:
        if length < 40:
            break
        m = case.reads[r][j]
        if not isinstance(m.content, str) or m.native is not None:
            continue  # a native row's text is its payload's too: kept whole
        match = MARKER.match(m.content)
        head = match.group(0) if match else ""
        body = m.content[len(head) :]
        out = case.copy()
        out.reads[r][j] = replace(m, content=head + body[: len(body) // 2], token_count=None)
        yield out
