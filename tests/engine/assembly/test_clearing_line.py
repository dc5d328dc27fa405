"""The clearing line and the cut point over consecutive answers, engine side
(docs/context.md#the-cut-point-and-a-prefix-that-stays-put,
docs/context.md#clearing-old-tool-results-with-hysteresis): a plain caller carries `Assembled.carry`
from answer to answer; the line clears all but the newest `keep_tool_results` at once when it moves,
stays put between moves (the prefix kept byte for byte), and moves with the cut in one answer; at
least four turns in five keep the previous prefix on gpt-4's small budget; previews never cut
everything."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contextq.assembly import Prompts, assemble_context, plan_context
from contextq.assembly.preview import cut_middle, fit_preview
from contextq.history import Message, count_message_tokens
from contextq.settings import Settings
from contextq.tokens import count_tokens

NOW = datetime(2026, 11, 23, 9, 30, tzinfo=UTC)
STUB = "[Old tool result cleared ("
SETTINGS = Settings()
PROMPTS = Prompts(system_prompt="S")


def _turn(rng: random.Random, n: int, seq: int) -> list[Message]:
    result = " ".join(f"k{rng.randint(0, 99)}={rng.randint(0, 999)}" for _ in range(60))
    call = {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    out = [
        Message("user", f"Turn {n}: check it.", seq=seq),
        Message("assistant", None, seq=seq + 1, tool_calls=[call]),
        Message("tool", f"report {n}: {result}", seq=seq + 2, tool_call_id=f"c{n}"),
        Message("assistant", f"Turn {n}: done.", seq=seq + 3),
    ]
    for m in out:
        m.id = f"{rng.getrandbits(128):032x}"
        m.token_count = count_message_tokens(m, "gpt-4")
    return out


def _tool_texts(answer: dict[str, Any]) -> list[str]:
    return [m["content"] for m in answer["messages"] if m["role"] == "tool"]


def _prefix(answer: dict[str, Any]) -> list[dict[str, Any]]:
    turn = max(i for i, m in enumerate(answer["messages"]) if m["role"] == "user")
    return list(answer["messages"][:turn])


def test_consecutive_answers_carry_the_line_and_the_cut() -> None:
    rng = random.Random(3)
    history: list[Message] = []
    carry_cut = carry_line = None
    previous: dict[str, Any] | None = None
    kept = compared = moves = 0
    for n in range(1, 111):
        history += _turn(rng, n, len(history) + 1)
        plan = plan_context(settings=SETTINGS, now=NOW, prompts=PROMPTS, model="gpt-4")
        assembled = assemble_context(history, plan, cut_seq=carry_cut, clear_seq=carry_line)
        answer = assembled.answer
        carry_cut, carry_line = assembled.carry.cut_seq, assembled.carry.clear_seq
        texts = _tool_texts(answer)
        assert not any(t.startswith(STUB) for t in texts[-5:])  # the newest 5 whole
        if assembled.clear_seq is not None:  # moved: everything older cleared at once
            moves += 1
            assert all(t.startswith(STUB) for t in texts[:-5])
            assert assembled.clear_seq == carry_line
        if previous is not None and previous["filtered"] and answer["filtered"]:
            compared += 1
            if answer["messages"][: len(_prefix(previous))] == _prefix(previous):
                kept += 1
            elif assembled.clear_seq is None:
                assert assembled.cut_seq is not None  # only a cut or a move changes it
        previous = answer
    assert moves >= 10 and compared >= 50
    assert kept / compared >= 0.8


@settings(deadline=None)
@given(st.integers(0, 400), st.integers(1, 60))
def test_a_cut_middle_never_cuts_everything(keep: int, words: int) -> None:
    text = " ".join(f"word{i}" for i in range(words * 5))
    total = count_tokens(text)
    shown = cut_middle(text, keep, "cl100k_base", whole="see message m1")
    if keep >= total:
        assert shown == text
    elif keep == 0:
        assert shown == ""
    else:
        found = re.search(r"\[… (\d+) of (\d+) tokens cut", shown)
        assert found is not None and int(found.group(1)) < int(found.group(2)) == total
        assert shown.startswith(text[:3])


@settings(deadline=None, max_examples=40)
@given(st.integers(20, 2000))
def test_fit_preview_finds_the_largest_body_that_fits(target: int) -> None:
    text = " ".join(f"w{i}" for i in range(3000))
    total = count_tokens(text)

    def build(body: int) -> str:
        return "HEAD|" + cut_middle(text, body, "cl100k_base") + "|LINE"

    fitted = fit_preview(build, count_tokens, body_total=total, target=target)
    cost = count_tokens(fitted.value)
    bare = count_tokens(build(0))
    if bare >= target:
        assert fitted.body == 0
        return
    assert cost <= target
    bigger = count_tokens(build(min(total, fitted.body + 12)))
    assert fitted.body == total or bigger > target or target - cost <= 12


def test_a_sliding_window_that_fits_does_not_move_the_line() -> None:
    """sliding_window drops by count: the line moves only when its window is over the
    room, not on every answer that leaves messages out."""
    rng = random.Random(4)
    history: list[Message] = []
    line = None
    moves = []
    for n in range(1, 61):
        history += _turn(rng, n, len(history) + 1)
        plan = plan_context(
            settings=SETTINGS, now=NOW, prompts=PROMPTS, model="gpt-4o",
            strategy="sliding_window", options={"window_size": 30}, force_filter=True,
        )  # fmt: skip
        assembled = assemble_context(history, plan, clear_seq=line)
        line = assembled.carry.clear_seq
        moves += [n] if assembled.clear_seq is not None else []
        assert len(assembled.answer["removed_message_ids"]) >= len(history) - 30
    assert moves == []  # 30 messages of these always fit gpt-4o's budget


def test_a_bound_target_keeps_the_hard_rooms_line_under_noop() -> None:
    """Under `noop` only the hard room clears; on a model that binds its reasoning the
    line it moved is carried like any other, so a later read whose room would fit the
    results whole still sends them as stubs: they never come back (its loops only grow;
    docs/context.md#bound-reasoning). A model that does not bind gets them back whole."""
    rng = random.Random(5)
    history: list[Message] = []
    for n in range(1, 41):
        history += _turn(rng, n, len(history) + 1)

    def read(model: str, window: int, line: int | None) -> Any:
        settings = Settings(MAX_CONTEXT_TOKENS=window)
        plan = plan_context(
            settings=settings, now=NOW, prompts=PROMPTS, model=model, strategy="noop",
            format="anthropic",
        )  # fmt: skip
        return assemble_context(history, plan, clear_seq=line)

    for model, bound in (("claude-opus-5-5", True), ("claude-opus-4-7", False)):
        first = read(model, 8_000, None)
        cleared = set(first.answer["cleared_tool_result_ids"])
        assert cleared and first.carry.clear_seq is not None
        later = read(model, 200_000, first.carry.clear_seq)
        again = set(later.answer["cleared_tool_result_ids"])
        # (the messages the hard room dropped come back, below the line: as stubs too)
        assert (again >= cleared) if bound else not again, model


def test_the_hard_rooms_line_stays_put_below_the_threshold() -> None:
    """Below the threshold only the hard room clears; the line it moved is carried and
    applied on the next read too, over the hard room or not: a read whose room would fit
    the results whole (here a wider window; in the fuzz run of seed 11834, an earlier
    turn's reasoning left out) still sends them as stubs, so the prefix stays put between
    moves (docs/context.md#clearing-old-tool-results-with-hysteresis)."""
    rng = random.Random(6)
    history: list[Message] = []

    def read(messages: list[Message], window: int, line: int | None) -> Any:
        settings = Settings(MAX_CONTEXT_TOKENS=window)
        plan = plan_context(settings=settings, now=NOW, prompts=PROMPTS, model="gpt-4o")
        return assemble_context(messages, plan, clear_seq=line)

    for n in range(1, 60):
        history += _turn(rng, n, len(history) + 1)
        first = read(history, 8_192, None)
        if first.answer["cleared_tool_result_ids"]:
            break
    assert not first.answer["filtered"] and first.carry.clear_seq is not None
    user = Message("user", "And now?", seq=len(history) + 1)
    user.id, user.token_count = "u-last", count_message_tokens(user, "gpt-4o")
    later = read([*history, user], 8_800, first.carry.clear_seq)
    assert not later.answer["filtered"] and later.clear_seq is None  # nothing moved
    assert set(later.answer["cleared_tool_result_ids"]) == set(
        first.answer["cleared_tool_result_ids"]
    )
    before_turn = first.answer["messages"][: len(first.answer["messages"]) - 4]
    assert later.answer["messages"][: len(before_turn)] == before_turn
