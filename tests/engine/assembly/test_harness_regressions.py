"""Regressions the invariant harness found in the engine (docs/harness.md), each the
generated case it shrank to, by seed: the case reproduces with
`python -m tests.engine.assembly.harness.run --seed SEED --only INVARIANT` and must now
keep the promise it broke. Each also asserts the situation it is about still arises in
that case (so a change of the generators cannot empty the test without failing it)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from contextq.assembly.formats import OPENING_TEXT as ANTHROPIC_OPENING
from tests.engine.assembly.harness import engine
from tests.engine.assembly.harness.cases import generate_case
from tests.engine.assembly.harness.run import check_case


def _answers(seed: int, *, all_formats: bool = False) -> Iterator[dict[str, Any]]:
    case = generate_case(seed, all_formats=all_formats)
    stored = engine.new_conversation()
    for index in range(len(case.reads)):
        yield engine.read(case, index, stored).answer


def _warned(text: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda answers: any(text in w for a in answers for w in a["warnings"])


def _noted(text: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda answers: any(text in n["reason"] for a in answers for n in a["file_notes"])


def _filtered(answers: list[dict[str, Any]]) -> bool:
    return all(a["filtered"] for a in answers)


def _keeps_its_promise(
    seed: int, invariant: str, arises: Callable[[list[dict[str, Any]]], bool], *, all_formats: bool
) -> None:
    """The case still shows what it was kept for, and `invariant` holds on it."""
    logging.disable(logging.WARNING)
    try:
        answers = list(_answers(seed, all_formats=all_formats))
        violations = check_case(generate_case(seed, all_formats=all_formats), invariant)
    finally:
        logging.disable(logging.NOTSET)
    assert arises(answers), "the case no longer shows what it was kept for"
    assert not violations, [p for v in violations for p in v.problems]


REGRESSIONS = [
    # the newest turn's files as many as fit by their count as sent (documents of one
    # message are one text: calibrated, they count more together than alone)
    (1940, "newest_files_first", _noted("does not fit the model's room")),
    # ... and next to the previews when the turn's messages had to shrink
    (1786, "newest_files_first", _warned("is shown as a preview")),
    # ... and next to the pinned user message when the turn's other messages were left out
    (19665, "newest_files_first", _warned("even as previews: its messages")),
    # a pinned newest user message's files in the pinned-alone case: noted, not dropped
    (9, "files_accounted", _warned("the pinned messages alone exceed budget_tokens")),
    # the newest pinned unit over the hard room leaves its files out before its text
    (735, "pinned_verbatim", _noted("does not fit the model's room")),
    # a pinned message of the newest turn is never cut for the hard room
    (484, "newest_present", _warned("the pinned messages do not fit the model's room")),
    # a pinned system message goes with S: never cut
    (780, "system_verbatim", _warned("the pinned messages do not fit the model's room")),
    # S, R and CA with the pinned messages over the room: the pinned-alone case
    (2863, "within_hard_room", _warned("the pinned messages alone exceed budget_tokens")),
    # the history's system messages count with the pinned ones against what S, R and CA
    # leave: R was sent past the hard room next to a pinned result's preview
    (12530, "within_hard_room", _warned("the pinned messages alone exceed budget_tokens")),
    # a cache breakpoint's calibrated cost is known once rendered (it can change its
    # block's factor): the newest turn's preview shrinks by what it passed the budget
    (18284, "within_budget", _warned("is shown as a preview")),
    # ... and so does the newest pinned result's preview when only the pinned are sent
    (19618, "within_hard_room", _warned("the pinned messages alone exceed budget_tokens")),
    # the hierarchical memory block left out when it does not fit
    (1282, "within_budget", _warned("the hierarchical memory block")),
    # usage before the carried stubs: filtering does not stop the turn after a move
    (138, "prefix_between_cuts", _filtered),
    # a summary cut to fit is cut the same from turn to turn
    (49, "prefix_between_cuts", _warned("the compaction summary")),
    # Anthropic: a newest turn over its room at calibrated counts takes the room kept
    # for an opening turn and the breakpoint before it (nothing stands before it then),
    # rather than being left out and the list sent empty
    (61914, "newest_present", _warned("is shown as a preview")),
    (61914, "sdk_valid", _warned("is shown as a preview")),
]


@pytest.mark.parametrize(
    ("seed", "invariant", "arises"), REGRESSIONS, ids=[f"{s}-{i}" for s, i, _ in REGRESSIONS]
)
def test_a_shrunk_case_keeps_its_promise(
    seed: int, invariant: str, arises: Callable[[list[dict[str, Any]]], bool]
) -> None:
    _keeps_its_promise(seed, invariant, arises, all_formats=False)


# found by `bench/context_fuzz.py` past CI's seeds, in every format (`generate_case(seed)`)
FUZZ_REGRESSIONS = [
    # the list ending on an older loop sends that loop's reasoning after the fill sized
    # the pinned messages without it: the oldest pinned unit gives way for the hard room
    (10602, "within_hard_room", _warned("with the reasoning of the loop the list ends on")),
    (64147, "within_hard_room", _warned("with the reasoning of the loop the list ends on")),
    # ... and over the budget, the newest turn's files give way (the pinned never do)
    (31209, "within_budget", _warned("the newest message's files do not fit")),
    (56841, "within_budget", _warned("the newest message's files do not fit")),
    # the newest user message's preview the largest that fits, though a calibrated cost
    # jumps with the cut: no room is left that its files would have fitted
    (28113, "newest_files_first", _warned("is shown as a preview")),
    (64299, "newest_files_first", _warned("is shown as a preview")),
    # the list ends on the newest pinned unit's loop, sent with its reasoning after the
    # fill sized it without: with no older pinned unit left to cut, the newest turn's
    # loose messages are left out, then the newest pinned unit's previews shrink
    (12910, "within_hard_room", _warned("next to the pinned messages, even as previews")),
    (45463, "within_hard_room", _warned("next to the pinned messages, even as previews")),
    (92482, "within_hard_room", _warned("next to the pinned messages, even as previews")),
    # ... and over the budget, the newest turn's smallest previews left out once rendered
    (42621, "within_budget", _warned("next to the pinned messages, even as previews")),
    (88344, "within_budget", _warned("next to the pinned messages, even as previews")),
    (95127, "within_budget", _warned("next to the pinned messages, even as previews")),
    # a whole pinned unit cut late frees more than it must: the newest turn's files the
    # fill left out go back in as many as fit
    (40738, "newest_files_first", _warned("with the reasoning of the loop the list ends on")),
]


@pytest.mark.parametrize(
    ("seed", "invariant", "arises"),
    FUZZ_REGRESSIONS,
    ids=[f"{s}-{i}" for s, i, _ in FUZZ_REGRESSIONS],
)
def test_a_fuzz_case_keeps_its_promise(
    seed: int, invariant: str, arises: Callable[[list[dict[str, Any]]], bool]
) -> None:
    _keeps_its_promise(seed, invariant, arises, all_formats=True)


def test_an_anthropic_answer_with_only_a_system_message_opens_with_a_user_turn() -> None:
    """Seed 61914's `sdk_valid` shrunk to one read of one system message: the history
    goes to `system`, and the Messages API needs at least one message."""
    case = generate_case(61914, all_formats=False)
    system = [m for m in case.reads[0] if m.role == "system"][:1]
    case = case.copy(reads=[system], force_filter=False, options={})
    answer = engine.read(case, 0, engine.new_conversation()).answer
    assert (case.format, len(answer["system"])) == ("anthropic", 2)  # S and the message
    assert answer["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": ANTHROPIC_OPENING}]}
    ]
    assert not check_case(case)
