"""Property tests: for random histories with tool chains and pins, every filtering
strategy keeps system and pinned messages, never orphans a tool message, never
starts with a tool result, returns a subsequence, and fits the budget when it can."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextq.catalog import ModelLimits
from contextq.history import Message, filter_history, hierarchical, sliding_window, token_budget
from contextq.history.chains import unit_at
from contextq.settings import Settings

MAX_PINNED = 3

step = st.one_of(
    st.tuples(st.just("user"), st.booleans(), st.integers(1, 120)),
    st.tuples(st.just("assistant"), st.booleans(), st.integers(1, 120)),
    st.tuples(st.just("system"), st.just(False), st.integers(1, 40)),
    st.tuples(st.just("chain"), st.integers(0, 3), st.integers(1, 3)),  # pin index (3 = none)
)


def build(steps: Sequence[tuple[str, object, int]]) -> list[Message]:
    out: list[Message] = []
    seq = 0
    for kind, flag, size in steps:
        seq += 1
        if kind == "chain":
            pin_at = int(flag)  # type: ignore[call-overload]
            ids = [f"c{seq}_{j}" for j in range(size)]
            calls = [
                {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for c in ids
            ]
            out.append(
                Message(
                    role="assistant",
                    tool_calls=calls,
                    seq=seq,
                    id=f"m{seq}",
                    token_count=20,
                    pinned=pin_at == 0,
                )
            )
            for j, c in enumerate(ids):
                seq += 1
                out.append(
                    Message(
                        role="tool",
                        tool_call_id=c,
                        content="r",
                        seq=seq,
                        id=f"m{seq}",
                        token_count=15 + 10 * j,
                        pinned=pin_at == j + 1,
                    )
                )
        else:
            out.append(
                Message(
                    role=kind,
                    content="x",
                    seq=seq,
                    id=f"m{seq}",  # type: ignore[arg-type]
                    token_count=size,
                    pinned=bool(flag),
                )
            )
    return out


def protected(messages: Sequence[Message]) -> set[int]:
    """System messages, the newest MAX_PINNED pinned ones, with their chains."""
    keep: set[int] = set()
    left = MAX_PINNED
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "system" or (m.pinned and left > 0):
            if m.role != "system":
                left -= 1
            keep.update(unit_at(messages, i).members)
    return keep


def check_invariants(messages: Sequence[Message], kept: list[int]) -> None:
    assert kept == sorted(set(kept)), "output must be a subsequence (order kept, no repeats)"
    assert protected(messages) <= set(kept), "system and pinned messages must be kept"
    out = [messages[i] for i in kept]
    call_ids = {c for m in out for c in m.call_ids}
    for m in out:
        if m.role == "tool":
            assert m.tool_call_id in call_ids, "a tool result without its call"
    answered = {m.tool_call_id for m in out if m.role == "tool"}
    present = {m.tool_call_id for m in messages if m.role == "tool"}
    for m in out:
        for c in m.call_ids:
            assert c not in present or c in answered, "a tool call without its result"
    first = next((m for m in out if m.role != "system"), None)
    assert first is None or first.role != "tool", "output starts with a tool result"


histories = st.lists(step, min_size=1, max_size=40).map(build)
common = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@common
@given(histories, st.integers(0, 1500))
def test_token_budget_properties(messages: list[Message], budget: int) -> None:
    sel = token_budget(
        messages, budget_tokens=budget, min_messages_to_keep=0, max_pinned=MAX_PINNED
    )
    check_invariants(messages, sel.kept)
    required = protected(messages)
    required_tokens = sum(messages[i].token_count or 0 for i in required)
    total = sum(messages[i].token_count or 0 for i in sel.kept)
    if required_tokens <= budget:
        assert total <= budget, "fits the budget whenever that is possible"
    newest = unit_at(messages, len(messages) - 1)
    newest_tokens = sum(messages[i].token_count or 0 for i in newest.members)
    if required_tokens + newest_tokens <= budget:
        assert set(newest.members) <= set(sel.kept), "the newest unit is kept when it fits"


@common
@given(histories, st.integers(0, 800), st.integers(0, 6))
def test_min_messages_never_pass_the_budget(
    messages: list[Message], budget: int, min_keep: int
) -> None:
    hard = budget
    sel = token_budget(
        messages,
        budget_tokens=budget,
        trim_tokens=budget // 2,
        min_messages_to_keep=min_keep,
        max_pinned=MAX_PINNED,
    )
    check_invariants(messages, sel.kept)
    required = protected(messages) | set(unit_at(messages, len(messages) - 1).members)
    if sum(messages[i].token_count or 0 for i in required) <= budget:
        assert sum(messages[i].token_count or 0 for i in sel.kept) <= hard


@common
@given(histories, st.integers(1, 12))
def test_sliding_window_properties(messages: list[Message], window: int) -> None:
    sel = sliding_window(messages, window_size=window, max_pinned=MAX_PINNED)
    check_invariants(messages, sel.kept)
    extra = [i for i in sel.kept if i not in protected(messages)]
    newest = unit_at(messages, len(messages) - 1)
    assert len(extra) <= max(window, len(newest.members))


@common
@given(histories, st.integers(200, 2000))
def test_hierarchical_properties(messages: list[Message], budget: int) -> None:
    sel = hierarchical(
        messages, budget_tokens=budget, min_messages_to_keep=0, max_pinned=MAX_PINNED
    )
    check_invariants(messages, sel.kept)


@common
@given(histories, st.sampled_from(["token_budget", "sliding_window", "hierarchical", "noop"]))
def test_filter_history_properties(messages: list[Message], strategy: str) -> None:
    limits = ModelLimits("m", "openai", 2_000, 400, "cl100k_base")
    res = filter_history(
        messages,
        limits=limits,
        settings=Settings(MAX_PINNED_MESSAGES=MAX_PINNED),
        strategy=strategy,
        force_filter=True,
    )
    assert res.error is None
    index = {id(m): i for i, m in enumerate(messages)}
    kept = [index[id(m)] for m in res.messages]
    if strategy != "noop":
        check_invariants(messages, kept)
    removed = {messages[i].id for i in range(len(messages))} - {m.id for m in res.messages}
    assert set(res.removed_ids) == removed
