"""The binding rule on its own (`contextq.assembly.binding`; docs/context.md#bound-reasoning):
the canonical prefix leaves out reasoning and cache marks only, a row binds at its first
read to the answer it was written after, a change leaves out a run from the end, a block
left out never comes back, and the state survives its JSON."""

from __future__ import annotations

from typing import Any

from contextq.assembly import binding
from contextq.assembly.binding import BindState, Pins, Slot
from contextq.assembly.formats import FORMATS
from contextq.assembly.pieces import message_piece, text_piece
from contextq.assembly.wire import Piece, Target
from contextq.history.native import parse_native
from contextq.reasoning_rules import rule_for

TARGET = Target(FORMATS["anthropic"], "cl100k_base", "anthropic", None, rule_for("claude-opus-5-5"))


def _rows(steps: int) -> list[Any]:
    batch: list[dict[str, Any]] = [{"role": "user", "content": "Fix it."}]
    for n in range(1, steps + 1):
        batch += [
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": f"t{n}", "signature": f"s{n}"},
                {"type": "tool_use", "id": f"tu{n}", "name": "f", "input": {}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{n}",
                                          "content": f"r{n}"}]},
        ]  # fmt: skip
    rows = parse_native("anthropic", batch, model="claude-opus-5-5")
    for i, row in enumerate(rows):
        row.id, row.seq = f"m{i}", i + 1
    return rows


def _slots(rows: list[Any], system: str = "S") -> list[Slot]:
    slots = [Slot(text_piece(system, "system", "system", TARGET), None)]
    return slots + [Slot(message_piece(r, TARGET), i) for i, r in enumerate(rows)]


def _decide(slots: list[Slot], state: BindState, **kw: Any) -> binding.Decision:
    lifted = [TARGET.wire.lifts(s.piece) for s in slots]
    return binding.decide(slots, tools=[], target=TARGET, state=state, lifted=lifted, **kw)


def _reads(rows: list[Any], cuts: dict[int, int]) -> list[binding.Decision]:
    """A read after each step (rows 0..2k); `cuts[k]`: that read starts at this index."""
    state, out = BindState(), []
    for k in range(len(rows) // 2 + 1):
        shown = rows[: 2 * k + 1]
        start = cuts.get(k, 0)
        slots = _slots(shown)
        slots = [slots[0], *slots[1 + start :]]
        decision = _decide(slots, state)
        out.append(decision)
        state = decision.state
    return out


def test_the_canonical_node_drops_reasoning_and_cache_marks_only() -> None:
    assert binding.canonical_node({"type": "thinking", "thinking": "", "signature": "x"}) is None
    assert binding.canonical_node({"type": "redacted_thinking", "data": "x"}) is None
    assert binding.canonical_node({"type": "reasoning", "id": "rs"}) is None
    assert binding.canonical_node({"text": "t", "thought": True}) is None
    marked = {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}
    assert binding.canonical_node(marked) == {"type": "text", "text": "a"}
    signed = {"functionCall": {"name": "f"}, "thoughtSignature": "c2ln"}
    assert binding.canonical_node(signed) == {"functionCall": {"name": "f"}}


def test_an_unchanged_loop_sends_every_step() -> None:
    decisions = _reads(_rows(5), {})
    assert all(not d.withheld for d in decisions)
    last = decisions[-1].state
    assert sorted(last.bound) == [2, 4, 6, 8, 10] and last.watermark is None
    # each step is bound to the answer before it, not to its prefix at its first read
    assert last.bound[4] == decisions[1].fingerprint


def test_a_cut_leaves_out_everything_after_it_and_nothing_comes_back() -> None:
    rows = _rows(6)
    decisions = _reads(rows, {4: 2, 5: 2, 6: 2})  # read 4 onwards start at row 2
    moved = decisions[4]
    assert moved.withheld == {3, 5, 7} and moved.newly == 3  # rows 4, 6, 8 (seqs)
    assert moved.state.watermark == 8
    after = decisions[5]
    assert after.withheld == {3, 5, 7} and after.newly == 0  # never sent again
    assert 9 not in after.withheld  # step 5, written after the move: kept
    assert not decisions[6].withheld - {3, 5, 7}


def test_a_changed_system_prompt_leaves_out_all() -> None:
    rows = _rows(3)
    state = _reads(rows, {})[-1].state
    decision = _decide(_slots(rows, system="S2"), state)
    assert decision.withheld == {1, 3, 5} and decision.state.watermark == 6
    assert decision.head != binding.newest_head(state, "anthropic")


def test_the_state_survives_its_json() -> None:
    state = _reads(_rows(3), {2: 2})[-1].state
    state = BindState(
        state.watermark, state.answers, state.bound, Pins(1, "2026-12-01T10:00:00+00:00",
        False, ((1, "R"),)), (7, "w"),
    )  # fmt: skip
    assert BindState.from_json(state.watermark, state.to_json()) == state
    assert BindState.from_json(None, "garbage") == BindState()


def test_pins_stay_in_a_turn_and_a_changed_reminder_is_added() -> None:
    pins, inside = binding.pins_for(
        BindState(), turn_seq=1, now="n1", searched=False, reminder="R", last_seq=1
    )
    assert not inside and pins.reminders == ((1, "R"),)
    state = BindState(pins=pins)
    same, inside = binding.pins_for(
        state, turn_seq=1, now="n2", searched=True, reminder="R", last_seq=3
    )
    assert inside and same == pins  # date and citation section as first sent
    more, _ = binding.pins_for(
        state, turn_seq=1, now="n2", searched=True, reminder="R+", last_seq=5
    )
    assert more.reminders == ((1, "R"), (5, "R+"))
    new, inside = binding.pins_for(
        state, turn_seq=7, now="n3", searched=False, reminder="R", last_seq=7
    )
    assert not inside and new.now == "n3" and new.reminders == ((7, "R"),)


def test_a_piece_withheld_says_why() -> None:
    row = _rows(1)[1]
    piece: Piece = message_piece(row, TARGET, withheld=True)
    assert piece.reasoning_left == ("prefix_changed", 1) and piece.reasoning_tokens == 0
    assert all(b["type"] != "thinking" for b in piece.nodes)


def test_reads_in_another_format_never_push_out_this_formats_answers() -> None:
    state = _reads(_rows(2), {})[-1].state
    mine = [a for a in state.answers if a.format == "anthropic"]
    for n in range(20):  # an inspector reading the same model in another format
        answers = binding._with_answer(state.answers, 100 + n, "responses", f"f{n}", "h")
        state = BindState(state.watermark, answers, state.bound, state.pins)
    assert [a for a in state.answers if a.format == "anthropic"] == mine
    assert sum(a.format == "responses" for a in state.answers) == binding.MAX_ANSWERS
