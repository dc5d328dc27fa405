"""Where the tool loop the list ends on starts, as sent (`Work.sent_loop`; fuzz seed
19465): Anthropic's open loop whose opening user message the cut left out reaches back,
as sent, to an older assistant turn; when the list's latest assistant message is the
current loop's, that older turn keeps its reasoning as the previous answer sent it
(left out on a target that strips earlier turns'), so the prefix stays put."""

from __future__ import annotations

from typing import Any

from contextq.assembly.citations import CitationMap
from contextq.assembly.formats import FORMATS
from contextq.assembly.wire import Target
from contextq.assembly.work import Work, build_work
from contextq.catalog import resolve_model
from contextq.history.types import Message
from contextq.reasoning_rules import rule_for
from contextq.settings import Settings
from tests.engine.assembly.harness.cases import generate_case
from tests.engine.assembly.harness.run import check_case

MODEL = "claude-sonnet-4-5"  # strips earlier turns' reasoning
TARGET = Target(FORMATS["anthropic"], "cl100k_base", "anthropic", reasoning=rule_for(MODEL))


def _call(seq: int) -> dict[str, Any]:
    return {"id": f"c{seq}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def _work() -> Work:
    """An old step (1, 2), the user message opening a loop (3), the loop's step (4, 5)
    and a later step (6, 7), then the newest user message riding with its result (8)."""
    history = [
        Message("assistant", None, id="a1", seq=1, tool_calls=[_call(1)], pinned=True),
        Message("tool", "r1", id="t2", seq=2, tool_call_id="c1", pinned=True),
        Message("user", "Fix it.", id="u3", seq=3),
        Message("assistant", None, id="a4", seq=4, tool_calls=[_call(4)]),
        Message("tool", "r4", id="t5", seq=5, tool_call_id="c4"),
        Message("assistant", None, id="a6", seq=6, tool_calls=[_call(6)]),
        Message("tool", "r6", id="t7", seq=7, tool_call_id="c6"),
        Message("user", "Also this.", id="u8", seq=8),
    ]
    limits = resolve_model(MODEL, Settings())
    return build_work(history, u=7, target=TARGET, limits=limits, files={}, citations=CitationMap())


def test_the_open_loop_starts_at_the_user_message_that_opened_it() -> None:
    assert _work().loop == 2


def test_a_list_ending_on_the_current_loop_keeps_the_older_turns_as_they_were() -> None:
    work = _work()
    # the opening user message cut away: as sent, the loop would reach back to step 1
    assert not work.sent_loop({0, 1, 3, 4, 5, 6, 7})
    assert work.loop == 2


def test_a_list_ending_before_the_current_loops_steps_moves_the_loop_back() -> None:
    work = _work()
    # the model's steps of the loop not sent: the newest user message rides with the old
    # step's result, and that step is the one the vendor validates
    assert work.sent_loop({0, 1, 7})
    assert work.loop == 0


def test_fuzz_seed_19465_keeps_its_prefix() -> None:
    """The whole case: read 1 leaves read 0's newest user message (m46) out with the cut
    point unmoved; the pinned step before it (m36) is sent without its thinking, as
    read 0 sent it."""
    assert not check_case(generate_case(19465), "prefix_between_cuts")
