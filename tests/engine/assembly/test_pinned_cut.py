"""The pinned cut as a value (`contextq.assembly.layout.cut_pinned`,
docs/context.md#pinned-messages): the pinned messages that do not fit the room are cut
from the oldest, the decision comes back as a `PinnedCut` and the caller's set is left
as given."""

from __future__ import annotations

from contextq.assembly.citations import CitationMap
from contextq.assembly.formats import FORMATS
from contextq.assembly.layout import PinnedCut, cut_pinned
from contextq.assembly.wire import Target
from contextq.assembly.work import Work, build_work
from contextq.catalog import resolve_model
from contextq.history.types import Message
from contextq.settings import Settings

TARGET = Target(FORMATS["openai"], "o200k_base", "openai")


def _work(pinned_words: int) -> Work:
    """Three pinned user/assistant pairs of `pinned_words` words each, then the newest
    user message (not pinned)."""
    history = []
    for n in range(3):
        text = " ".join(f"pin{n}word{k}" for k in range(pinned_words))
        history += [
            Message("user", text, id=f"u{n}", seq=2 * n + 1, pinned=True),
            Message("assistant", f"ok {n}", id=f"a{n}", seq=2 * n + 2),
        ]
    history.append(Message("user", "And now?", id="new", seq=7))
    limits = resolve_model("gpt-4o", Settings())
    return build_work(
        history, u=len(history) - 1, target=TARGET, limits=limits, files={},
        citations=CitationMap(),
    )  # fmt: skip


def test_pinned_messages_that_fit_are_all_kept_and_nothing_is_said() -> None:
    work = _work(50)
    pinned = {0, 2, 4}
    decision = cut_pinned(work, pinned, room=10_000)
    assert decision == PinnedCut(kept=frozenset({0, 2, 4}), cut=frozenset(), warning=None)


def test_the_oldest_pinned_are_cut_and_named_and_the_callers_set_is_left_as_given() -> None:
    work = _work(400)
    pinned = {0, 2, 4}
    one = work.cost(4)
    decision = cut_pinned(work, pinned, room=one + one // 2)  # room for one of the three
    assert pinned == {0, 2, 4}
    assert decision.cut == frozenset({0, 2})
    assert decision.kept == frozenset({4})
    assert decision.warning is not None and "['u0', 'u1']" in decision.warning
