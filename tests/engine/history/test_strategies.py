"""Strategies as pure functions: budget, chains, pins, triggers, fallbacks, validation."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, overload

import pytest

from contextq.catalog import ModelLimits
from contextq.errors import ValidationFailed
from contextq.history import (
    Message,
    compute_budget,
    filter_history,
    hierarchical,
    noop,
    resolve_strategy,
    sliding_window,
    token_budget,
    validate_options,
    validate_strategy,
    validate_threshold,
)
from contextq.history import filtering as filtering_module
from contextq.settings import Settings
from tests.engine.history.builders import agent_history, assistant, call, counted, result, user

LIMITS = ModelLimits("test-model", "openai", 10_000, 2_000, "cl100k_base")


def ids(messages: Sequence[Message]) -> list[str | None]:
    return [m.id for m in messages]


def kept(messages: Sequence[Message], selection_kept: list[int]) -> list[str | None]:
    return [messages[i].id for i in selection_kept]


def fixed(*messages: Message, tokens: int = 10) -> list[Message]:
    for m in messages:
        m.token_count = tokens
    return list(messages)


# ---------------------------------------------------------------- budget


def test_budget_formula_of_spec() -> None:
    b = compute_budget(context_limit=128_000, model_max_output=16_384)
    assert b.max_output_tokens == 16_384
    assert b.budget_tokens == int((128_000 - 16_384) * 0.8) - 1000 == 88_292
    assert b.hard_limit_tokens == 128_000 - 16_384
    # the model's max output is capped at a quarter of the window
    capped = compute_budget(context_limit=200_000, model_max_output=64_000)
    assert capped.max_output_tokens == 50_000
    assert capped.budget_tokens == 119_000
    # explicit options win; tools come off first
    custom = compute_budget(
        context_limit=10_000,
        model_max_output=8_000,
        max_output_tokens=1_000,
        tool_definition_tokens=500,
        budget_percentage=0.5,
        reserve_tokens=0,
    )
    assert custom.budget_tokens == 4_250
    # a separate input limit caps the room
    assert (
        compute_budget(
            context_limit=400_000, model_max_output=128_000, max_input_tokens=272_000
        ).hard_limit_tokens
        == 272_000
    )


# ---------------------------------------------------------------- token_budget


def test_token_budget_keeps_system_pinned_and_newest() -> None:
    msgs = fixed(
        Message(role="system", content="sys", id="s", seq=0),
        user(1, "old pinned fact", pinned=True),
        assistant(2, "a"),
        user(3, "b"),
        assistant(4, "c"),
        user(5, "d"),
        assistant(6, "e"),
    )
    sel = token_budget(msgs, budget_tokens=40, min_messages_to_keep=0)
    assert kept(msgs, sel.kept) == ["s", "m1", "m5", "m6"]


def test_token_budget_keeps_tool_chains_whole() -> None:
    msgs = fixed(
        user(1, "q"),
        call(2, "c1", "c2"),
        result(3, "c1"),
        result(4, "c2"),
        assistant(5, "answer"),
    )
    # room for 3 messages: the chain (3 messages) does not fit after the answer → stop
    sel = token_budget(msgs, budget_tokens=30, min_messages_to_keep=0)
    assert kept(msgs, sel.kept) == ["m5"]
    sel = token_budget(msgs, budget_tokens=40, min_messages_to_keep=0)
    assert kept(msgs, sel.kept) == ["m2", "m3", "m4", "m5"]


def test_pinned_tool_result_brings_its_call() -> None:
    msgs = fixed(
        user(1, "q"),
        call(2, "c1"),
        result(3, "c1", pinned=True),
        assistant(4, "x"),
        user(5, "y"),
        assistant(6, "z"),
    )
    sel = token_budget(msgs, budget_tokens=30, min_messages_to_keep=0)
    assert kept(msgs, sel.kept) == ["m2", "m3", "m6"]


def test_min_messages_give_way_to_the_budget_with_a_warning() -> None:
    msgs = fixed(*[user(i, "x") for i in range(1, 11)])  # 10 tokens each
    # the hysteresis cut (trim) keeps 2, the minimum takes it to 5 within the budget
    sel = token_budget(msgs, budget_tokens=60, trim_tokens=20, min_messages_to_keep=5)
    assert len(sel.kept) == 5 and not sel.warnings
    # the budget holds only 4: the minimum gives way, with a warning
    sel = token_budget(msgs, budget_tokens=40, trim_tokens=20, min_messages_to_keep=5)
    assert len(sel.kept) == 4
    assert sel.warnings and "MIN_MESSAGES_TO_KEEP (5)" in sel.warnings[0]
    # nothing past the budget, not even the newest message (the assembly previews it)
    assert token_budget(msgs, budget_tokens=0, min_messages_to_keep=0).kept == []


def test_token_budget_hysteresis_keeps_its_cut_until_the_budget_is_exceeded() -> None:
    msgs = fixed(*[user(i, "x") for i in range(1, 21)])  # 10 tokens each, 200 in all
    first = token_budget(msgs, budget_tokens=100, trim_tokens=70, min_messages_to_keep=0)
    assert len(first.kept) == 7 and first.cut_seq == msgs[first.kept[0]].seq
    grown = fixed(*[user(i, "x") for i in range(1, 24)])  # three more messages
    kept = token_budget(grown, budget_tokens=100, trim_tokens=70, cut_seq=first.cut_seq)
    assert kept.cut_seq == first.cut_seq and len(kept.kept) == 10  # the same start
    over = fixed(*[user(i, "x") for i in range(1, 25)])  # 11 from the cut: over 100
    recut = token_budget(
        over, budget_tokens=100, trim_tokens=70, cut_seq=first.cut_seq, min_messages_to_keep=0
    )
    assert recut.cut_seq is not None and recut.cut_seq > first.cut_seq
    assert len(recut.kept) == 7
    # a history that fits whole is not cut at all
    whole = token_budget(msgs[:5], budget_tokens=100, trim_tokens=70)
    assert len(whole.kept) == 5 and whole.cut_seq is None


def test_only_the_newest_max_pinned_are_protected() -> None:
    msgs = fixed(*[user(i, "p", pinned=True) for i in range(1, 6)], user(6, "new"))
    sel = token_budget(msgs, budget_tokens=30, max_pinned=2, min_messages_to_keep=0)
    assert kept(msgs, sel.kept) == ["m4", "m5", "m6"]


def test_orphan_tool_results_are_never_sent_by_a_filter() -> None:
    msgs = fixed(result(1, "ghost"), user(2, "q"), assistant(3, "a"))
    sel = token_budget(msgs, budget_tokens=1_000)
    assert kept(msgs, sel.kept) == ["m2", "m3"]


class CountingList(Sequence[Message]):
    """A list that counts element reads, to show the walk is bounded by what it keeps."""

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        self.reads = 0

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Message]: ...
    def __getitem__(self, i: Any) -> Any:
        self.reads += 1
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)


def test_selection_cost_grows_with_kept_not_history_length() -> None:
    base = agent_history(60, seed=3, system=False)
    small = CountingList(base)
    token_budget(small, budget_tokens=2_000, anchors=[])
    big_items = agent_history(1_500, seed=3, system=False)
    big = CountingList(big_items)
    sel = token_budget(big, budget_tokens=2_000, anchors=[])
    assert len(big_items) > 20 * len(base)
    assert big.reads < 20 * len(sel.kept) + 50  # bounded by the kept part
    assert big.reads < 3 * max(small.reads, 1)


# ---------------------------------------------------------------- other strategies


def test_sliding_window() -> None:
    msgs = fixed(
        Message(role="system", content="s", id="s", seq=0),
        user(1, "a"),
        call(2, "c1"),
        result(3, "c1"),
        assistant(4, "b"),
        user(5, "c"),
    )
    assert kept(msgs, sliding_window(msgs, window_size=2).kept) == ["s", "m4", "m5"]
    # the chain would cross the window edge: left out whole
    assert kept(msgs, sliding_window(msgs, window_size=3).kept) == ["s", "m4", "m5"]
    assert kept(msgs, sliding_window(msgs, window_size=4).kept) == ["s", "m2", "m3", "m4", "m5"]


def test_noop_keeps_everything() -> None:
    msgs = agent_history(5)
    assert noop(msgs).kept == list(range(len(msgs)))


def test_hierarchical_sends_memory_and_keeps_old_critical_messages() -> None:
    msgs = fixed(
        user(1, "Build the parser", pinned=True),  # an old pin must not hide what follows it
        assistant(2, "We decided to use a PEG grammar", kind="decision"),
        *[assistant(i, f"routine step {i}", kind="reasoning") for i in range(3, 30)],
        user(30, "continue"),
    )
    for m in msgs[2:-1]:
        m.importance = 0.3
        m.token_count = 30
    sel = hierarchical(msgs, budget_tokens=800, min_messages_to_keep=0)
    assert len(sel.preamble) == 1
    block = str(sel.preamble[0].content)
    assert "KEY DECISIONS" in block and "PEG grammar" in block
    assert "RECENT ACTIONS" in block
    assert 0 in sel.kept  # pinned
    assert 1 in sel.kept  # the old decision message stays
    assert sel.kept[-1] == len(msgs) - 1
    assert 5 not in sel.kept  # an old routine step goes


# ---------------------------------------------------------------- filter_history


def big_history() -> list[Message]:
    return counted([user(i, "word " * 200) for i in range(1, 41)])  # ≈ 8 000+ tokens


def test_threshold_trigger_force_and_skip() -> None:
    msgs = big_history()
    settings = Settings()
    total = sum(m.token_count or 0 for m in msgs)
    assert total / LIMITS.context_window >= 0.8
    res = filter_history(msgs, limits=LIMITS, settings=settings)
    assert res.filtered and res.kept_count < len(msgs)
    assert res.usage_before >= 0.8 and res.usage_after < res.usage_before
    assert res.kept_tokens <= res.budget.budget_tokens
    assert res.removed_ids == [m.id for m in msgs[: len(msgs) - res.kept_count]]
    few = msgs[:5]
    below = filter_history(few, limits=LIMITS, settings=settings)
    assert not below.filtered and below.kept_count == 5
    forced = filter_history(
        few,
        limits=LIMITS,
        settings=Settings(MIN_MESSAGES_TO_KEEP=0),
        strategy="sliding_window",
        options={"window_size": 2},
        force_filter=True,
    )
    assert forced.filtered and ids(forced.messages) == ["m4", "m5"]
    # MIN_MESSAGES_TO_KEEP holds for sliding_window too (seed 004)
    minimum = filter_history(
        msgs,
        limits=LIMITS,
        settings=Settings(MIN_MESSAGES_TO_KEEP=4),
        strategy="sliding_window",
        options={"window_size": 2},
        force_filter=True,
    )
    assert ids(minimum.messages) == ["m37", "m38", "m39", "m40"]
    skipped = filter_history(msgs, limits=LIMITS, settings=settings, skip_filter=True)
    assert not skipped.filtered and skipped.kept_count == len(msgs)
    with pytest.raises(ValidationFailed) as err:
        filter_history(msgs, limits=LIMITS, settings=settings, skip_filter=True, force_filter=True)
    assert err.value.field == "skip_filter"


def test_auto_compression_switch() -> None:
    msgs = big_history()
    off = Settings(ENABLE_AUTO_COMPRESSION=False)
    assert not filter_history(msgs, limits=LIMITS, settings=off).filtered
    assert filter_history(msgs, limits=LIMITS, settings=off, force_filter=True).filtered


def test_min_messages_to_keep_setting_is_the_default() -> None:
    msgs = big_history()
    options = {"budget_percentage": 0.1, "reserve_tokens": 0, "trim_to": 0.3}
    res = filter_history(
        msgs, limits=LIMITS, settings=Settings(MIN_MESSAGES_TO_KEEP=0), options=options
    )
    res_min = filter_history(
        msgs, limits=LIMITS, settings=Settings(MIN_MESSAGES_TO_KEEP=3), options=options
    )
    assert res.kept_count == 1  # trimmed to 30% of a budget of about 3 messages
    assert res_min.kept_count == 3 and not res_min.warnings
    short = filter_history(
        msgs, limits=LIMITS, settings=Settings(MIN_MESSAGES_TO_KEEP=8), options=options
    )
    assert short.kept_count < 8 and "MIN_MESSAGES_TO_KEEP (8)" in short.warnings[0]


def test_unknown_strategy_falls_back_to_noop(caplog: pytest.LogCaptureFixture) -> None:
    msgs = big_history()
    with caplog.at_level(logging.WARNING, logger="contextq.history"):
        res = filter_history(
            msgs, limits=LIMITS, settings=Settings(), strategy="magic", options={"whatever": 1}
        )
    assert res.strategy == "noop" and not res.filtered and res.kept_count == len(msgs)
    assert res.warnings and "magic" in res.warnings[0]
    assert any("unknown context strategy 'magic'" in r.getMessage() for r in caplog.records)
    assert resolve_strategy(None) == "token_budget"


def test_exception_inside_filtering_fails_open(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(filtering_module, "token_budget", broken)
    msgs = big_history()
    with caplog.at_level(logging.ERROR, logger="contextq.history"):
        res = filter_history(msgs, limits=LIMITS, settings=Settings(), force_filter=True)
    assert res.kept_count == len(msgs) and not res.filtered
    assert res.error == "RuntimeError: boom"
    assert any("failed" in r.getMessage() and r.exc_info for r in caplog.records)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("strategy", "options", "field"),
    [
        ("token_budget", {"budget_percentage": 1.5}, "context_options.budget_percentage"),
        ("token_budget", {"budget_percentage": 0}, "context_options.budget_percentage"),
        ("token_budget", {"reserve_tokens": -1}, "context_options.reserve_tokens"),
        ("token_budget", {"reserve_tokens": "10"}, "context_options.reserve_tokens"),
        ("token_budget", {"reserve_tokens": True}, "context_options.reserve_tokens"),
        ("token_budget", {"window_size": 3}, "context_options.window_size"),
        ("sliding_window", {"window_size": 0}, "context_options.window_size"),
        ("sliding_window", {"window_size": 2.5}, "context_options.window_size"),
        ("noop", {"window_size": 3}, "context_options.window_size"),
        ("hierarchical", {"compression_threshold": 0}, "context_options.compression_threshold"),
        ("hierarchical", {"compression_threshold": 1.5}, "context_options.compression_threshold"),
        ("nonsense", {}, "context_strategy"),
    ],
)
def test_invalid_options_name_the_field(strategy: str, options: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        validate_options(strategy, options)
    assert err.value.field == field
    assert field.rsplit(".", 1)[-1] in str(err.value)


def test_valid_options_are_cleaned() -> None:
    assert validate_options("token_budget", {"budget_percentage": 1, "reserve_tokens": 10.0}) == {
        "budget_percentage": 1.0,
        "reserve_tokens": 10,
    }
    assert validate_options("sliding_window", None) == {}
    assert validate_strategy("hierarchical") == "hierarchical"
    assert validate_threshold(0.5) == 0.5
    with pytest.raises(ValidationFailed) as err:
        validate_threshold(0)
    assert err.value.field == "context_threshold"
    with pytest.raises(ValidationFailed):
        validate_options("token_budget", [1, 2])  # type: ignore[arg-type]


def test_window_with_whole_history_total() -> None:
    """A caller may pass only the newest messages with the whole history's running total:
    the total drives usage and the trigger, the kept tokens are summed from what is sent."""
    msgs = big_history()
    window = msgs[-5:]
    whole = sum(m.token_count or 0 for m in msgs)
    res = filter_history(window, limits=LIMITS, settings=Settings(), history_tokens=whole)
    assert res.filtered  # triggered by the whole history's usage
    assert res.kept_count == 5 and res.removed_ids == []
    assert res.kept_tokens == sum(m.token_count or 0 for m in window)
    assert res.usage_before == round(whole / LIMITS.context_window, 4)
