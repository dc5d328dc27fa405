"""`prefix_between_cuts` and the pinned messages over the hard room (docs/harness.md,
decision (a)): an answer whose newest pinned unit is sent shrunk to previews, sized by
the room each answer leaves it, promises no prefix; one whose pinned messages are sent
whole (or as their processors' preview) is judged."""

from __future__ import annotations

import logging

from tests.engine.assembly.harness.cases import generate_case
from tests.engine.assembly.harness.facts import Facts
from tests.engine.assembly.harness.prefix import _pinned_shrunk, prefix_between_cuts
from tests.engine.assembly.harness.run import readings


def _facts(seed: int) -> list[Facts]:
    logging.disable(logging.WARNING)
    try:
        return [f for f in readings(generate_case(seed)) if isinstance(f, Facts)]
    finally:
        logging.disable(logging.NOTSET)


def test_a_pinned_unit_shrunk_for_the_hard_room_is_told() -> None:
    """Seed 54002 (the fuzz run's): a pinned chain with a large result over the hard room,
    whose preview grew when the binding rule left reasoning of the chain out. Since
    `layout.give_way` the chain goes pinned-alone from the first answer on (the harness's
    other exemption); the shrunk unit is still told in every answer, and every answer
    holds."""
    facts = _facts(54002)
    assert len(facts) > 2 and all(_pinned_shrunk(f) for f in facts)
    assert all(prefix_between_cuts(f) == [] for f in facts)


def test_pinned_messages_sent_as_stored_are_judged() -> None:
    """Seed 0: a pinned message sent whole in every answer is not taken for a shrunk one."""
    facts = [f for f in _facts(0) if any(f.present(m) for m in f.pinned)]
    assert facts and not any(_pinned_shrunk(f) for f in facts)
