"""What gives way when the count as sent still passes the limit after the fill, with no
unprotected history left (`contextq.assembly.layout.give_way`; fuzz seeds 10602, 64147,
31209, 56841): the newest turn's files, as many as fit, then (the hard room only) the
oldest pinned units. And the preview search finding the largest body that fits when
the cost jumps (`contextq.assembly.preview.fit_preview`; fuzz seeds 28113, 64299)."""

from __future__ import annotations

from contextq.assembly.citations import CitationMap
from contextq.assembly.formats import FORMATS
from contextq.assembly.inputs import FileView
from contextq.assembly.layout import Fill, cut_pinned_late, give_way, refit_turn_files
from contextq.assembly.preview import fit_preview
from contextq.assembly.wire import Target
from contextq.assembly.work import Work, attach_files, build_work
from contextq.catalog import resolve_model
from contextq.history.types import Message
from contextq.settings import Settings

TARGET = Target(FORMATS["openai"], "o200k_base", "openai")


def _doc(file_id: str, words: int) -> FileView:
    text = " ".join(f"{file_id}w{k}" for k in range(words))
    return FileView(
        file_id, "ready", filename=f"{file_id}.md", category="text", file_type="markdown", text=text
    )


def _work(files: dict[str, FileView] | None = None) -> Work:
    """Two pinned user/assistant pairs, then the newest user message (with `files`
    attached, when given) and the model's answer."""
    history = []
    for n in range(2):
        text = " ".join(f"pin{n}word{k}" for k in range(300))
        history += [
            Message("user", text, id=f"u{n}", seq=2 * n + 1, pinned=True),
            Message("assistant", f"ok {n}", id=f"a{n}", seq=2 * n + 2),
        ]
    ids = list(files or {})
    history += [
        Message("user", "And now?", id="new", seq=5, file_ids=ids),
        Message("assistant", "On it.", id="answer", seq=6),
    ]
    work = build_work(
        history, u=4, target=TARGET, limits=resolve_model("gpt-4o", Settings()),
        files=files or {}, citations=CitationMap(),
    )  # fmt: skip
    if ids:
        attach_files(work, 4, ids)
    return work


def _fill(work: Work) -> Fill:
    """Everything kept and protected (the pinned messages with their chains, the turn)."""
    everything = set(range(len(work.history)))
    return Fill(set(everything), protected=set(everything), room_name="the context budget")


def test_the_oldest_pinned_unit_is_cut_late_never_the_newest_nor_the_turn() -> None:
    work = _work()
    fill = _fill(work)
    assert cut_pinned_late(work, fill, excess=1)
    assert fill.kept == {1, 2, 3, 4, 5}  # u0 left out; u1 and the turn stay
    assert any("['u0']" in w and "the oldest were left out" in w for w in fill.warnings)
    assert not cut_pinned_late(work, fill, excess=10_000)  # the newest pinned unit stays
    assert fill.kept == {1, 2, 3, 4, 5}


def test_the_pinned_are_cut_late_for_the_hard_room_only() -> None:
    work = _work()
    fill = _fill(work)
    assert not give_way(work, fill, 1, hard=False)  # over the budget: pinned never give way
    assert fill.kept == set(range(6))
    assert give_way(work, fill, 1, hard=True)
    assert 0 not in fill.kept


def test_the_newest_turns_files_give_way_first_as_many_as_fit() -> None:
    files = {f"f{n}": _doc(f"f{n}", 120) for n in range(4)}
    work = _work(files)
    fill = _fill(work)
    before = work.costs([4, 5])
    one = work.costs([4, 5]) - _work().costs([4, 5])
    assert give_way(work, fill, one // 8, hard=True)  # half a file's worth: one leaves
    assert fill.kept == set(range(6))
    shown = work.shown_files[4][:-1]
    assert shown == ("f0", "f1", "f2")  # in the order attached, the last left out
    assert work.costs([4, 5]) <= before - one // 8
    assert any("files do not fit the context budget" in w for w in fill.warnings)
    assert any(n.file_id == "f3" for n in work.attached[4].notes)
    assert not refit_turn_files(_work(), _fill(_work()), 10)  # no files: nothing gives way


def test_the_preview_search_finds_the_largest_body_when_the_cost_jumps() -> None:
    """A calibrated count can cost a body token more than one, and a cut can change the
    kind a text is counted as: here each body token costs two and the cost jumps by 100
    past a body of 150 tokens (seed 64299's shape: a preview of 320 tokens for a room of
    535), and the search must still land next to the largest body that fits."""

    def cost(body: int) -> int:
        return 200 + 2 * body + (100 if body > 150 else 0)

    fitted = fit_preview(lambda b: b, cost, body_total=670, target=535)
    assert fitted.cost == cost(fitted.body) <= 535
    assert fitted.body >= 145, fitted  # within a few tokens of the largest (150)
