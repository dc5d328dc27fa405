"""The ready-to-send context (docs/history.md#the-ready-to-send-context): the history, files,
prompts and reminders in one budget, laid out top to bottom and rendered in the target format.

Order: S (with the history's own system messages) → summary → memory block → history
(oldest first, each user message with its documents just above it) → CA → P → F → U
→ the turn's tool calls and results → R. `assemble_context` never calls an LLM and
never waits on anything.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from contextq.assembly import bound as bound_reasoning
from contextq.assembly import layout
from contextq.assembly.answer import answer_fields
from contextq.assembly.binding import BindState
from contextq.assembly.bound import Bound, deferred_warning
from contextq.assembly.citations import CitationMap
from contextq.assembly.fill import Parts, apply_carried_line, total_before, window_factor
from contextq.assembly.fill import fill as fill_history
from contextq.assembly.inputs import Carry, FileView
from contextq.assembly.pieces import documents_piece, text_piece
from contextq.assembly.plan import ContextPlan
from contextq.assembly.project import render_project
from contextq.assembly.prompts import custom_agent_text, reminder_text, system_text
from contextq.assembly.render import render
from contextq.assembly.select import Ran
from contextq.assembly.tool_results import ToolResultView
from contextq.assembly.turn import search_ran, split_turn
from contextq.assembly.wire import Piece, Rendered
from contextq.assembly.work import Work, build_work
from contextq.history.context import visible_history
from contextq.history.types import Message

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory

log = logging.getLogger("contextq.history")


@dataclass(slots=True)
class Assembled:
    """The context answer (`answer`) and what the service stores after it."""

    answer: dict[str, Any]
    new_citations: dict[str, int]  # source_key → id, first cited by this answer
    cut_seq: int | None  # the cut point, when this answer moved it (to store), else None
    error: str | None = None  # filtering failed and everything was sent (fail-open)
    project_room: int | None = None  # a whole project did not fit P's room: ask for chunks
    clear_seq: int | None = None  # the clearing line, when this answer moved it, else None
    carry: Carry = field(default_factory=Carry)  # the state to give the next answer
    named: list[str] = field(default_factory=list)  # tool results shown by path (ids)
    window_factor: float | None = None  # read the window this much deeper (`fill`)
    binding: BindState | None = None  # the binding state, when this answer changed it


def newest_user_seq(messages: Sequence[Message]) -> int | None:
    split = split_turn(messages)
    return messages[split.start].seq if split.start < len(messages) else None


def assemble_context(
    messages: Sequence[Message],
    plan: ContextPlan,
    *,
    files: Mapping[str, FileView] | None = None,
    citations: CitationMap | None = None,
    cut_seq: int | None = None,
    memory: HierarchicalMemory | None = None,
    conversation_id: str | None = None,
    tool_results: Mapping[str, ToolResultView] | None = None,
    clear_seq: int | None = None,
    binding: BindState | None = None,
) -> Assembled:
    """The context answer for `messages` (what `plan.read.load` said to read, in seq
    order, `token_count` set). `tool_results`: the previews of large tool results by
    message id. `cut_seq`, `clear_seq`: the cut point and clearing line carried from
    the previous answer for this model (`Assembled.carry` gives the next ones), and
    `binding` the binding state (a target that binds its reasoning). Never
    fails on a strategy error: it sends everything it may (fail-open), logged and
    reported in `error`."""
    started = time.perf_counter()
    citations = citations or CitationMap()
    read = plan.read
    work, searched = _prepare(messages, plan, files or {}, citations, tool_results or {})
    carry = Carry(cut_seq, clear_seq, binding)
    bound = bound_reasoning.start(work, plan, binding, searched)
    parts = _parts(plan, searched, citations, bound)
    # usage is the context's before any clearing
    # (docs/context.md#clearing-old-tool-results-with-hysteresis clears *when* usage is over the
    # threshold): measured with the carried stubs, it would fall below the threshold
    # after each move of the line and send the history before the cut point again
    before = total_before(work, parts, plan)
    if bound is not None:
        bound_reasoning.apply_watermark(work, bound)
    runs = read.filter.runs_for_total(before)
    # inside a bound tool loop the cut point and line move only when the hard room forces
    # them: the budget's move waits for the next user turn (docs/context.md#bound-reasoning)
    # (a carried cut point: token_budget's; the other strategies' start moves as they say)
    defer = bound is not None and bound.in_loop and read.filter.strategy == "token_budget"
    budget = read.filter.budget
    limit = budget.budget_tokens if runs and not defer else budget.hard_limit_tokens
    # the carried line applies on every read, over the hard room or not: results once
    # sent as stubs stay stubs until the line moves (between moves the prefix stays put,
    # docs/context.md#clearing-old-tool-results-with-hysteresis); under noop or a skipped
    # filter only a bound target carries one (its loops only grow; docs/context.md#bound-reasoning)
    line = apply_carried_line(work, plan, carry, bound=bound is not None)
    fill, result = fill_history(
        work, parts, plan, runs=runs, limit=limit, carry=carry, line=line, memory=memory,
        citations=citations, defer=defer,
    )  # fmt: skip
    work.sent_loop(fill.kept)  # the loop the list ends on, when it starts earlier
    final = _finish(
        work, parts, fill=fill, plan=plan, citations=citations, limit=fill.limit or limit,
        bound=bound, cut_seq=_new_cut(result, carry),
    )  # fmt: skip
    if bound is not None:
        _bound_warning(bound, plan, fill, result, carry)
        if defer and runs and final.token_count > budget.budget_tokens:
            fill.warnings.append(deferred_warning(final.token_count, budget.budget_tokens))
    answer = answer_fields(
        work, fill, result=result, plan=plan, rendered=final, before=before, runs=runs,
        conversation_id=conversation_id, citations=citations,
    )  # fmt: skip
    answer["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
    if answer["filtered"]:
        _log_filtered(answer, conversation_id, len(work.history), len(fill.kept))
    assembled = _assembled(answer, result, carry, citations, parts, named=_named(work, fill))
    if bound is not None and bound.decision is not None:
        new_state = bound.decision.state
        assembled.carry = replace(assembled.carry, binding=new_state)
        assembled.binding = new_state if new_state != (binding or BindState()) else None
    assembled.window_factor = window_factor(work, plan, fill.kept, final.token_count, cut_seq)
    return assembled


def _new_cut(result: Ran | None, carry: Carry) -> int | None:
    """The cut point this answer leaves (moved, else carried)."""
    ok = result is not None and result.error is None and result.cut_seq is not None
    return result.cut_seq if ok and result is not None else carry.cut_seq


def _bound_warning(
    bound: Bound, plan: ContextPlan, fill: layout.Fill, result: Ran | None, carry: Carry
) -> None:
    """Say the reasoning the binding rule newly left out, and why
    (docs/context.md#bound-reasoning)."""
    cut = _new_cut(result, carry)
    warning = bound_reasoning.warning(
        bound,
        plan,
        cut_moved=cut is not None and cut != carry.cut_seq,
        line_moved=result is not None and result.clear_seq is not None,
    )
    if warning is not None:
        fill.warnings.append(warning)


def _log_filtered(answer: dict[str, Any], conversation_id: str | None, n: int, kept: int) -> None:
    cleared = answer["cleared_tool_result_ids"]
    log.info(
        "[ContextFilter] Filtered conversation %s: %d → %d messages using %s in %.1fms%s",
        conversation_id, n, kept, answer["strategy"], answer["duration_ms"],
        f"; {len(cleared)} old tool results cleared (listed in the answer)" if cleared else "",
    )  # fmt: skip


def _assembled(
    answer: dict[str, Any],
    result: Ran | None,
    carry: Carry,
    citations: CitationMap,
    parts: Parts,
    *,
    named: list[str],
) -> Assembled:
    """The answer with what the service stores: the cut point and line this answer
    moved (None: unchanged), and the state to carry to the next answer."""
    ok = result is not None and result.error is None
    new_cut = result.cut_seq if ok and result is not None else None
    moved = result.clear_seq if result is not None else None
    return Assembled(
        answer,
        dict(citations.assigned),
        new_cut if new_cut != carry.cut_seq else None,
        result.error if result is not None else None,
        parts.project_room,
        clear_seq=moved,
        carry=Carry(
            new_cut if new_cut is not None else carry.cut_seq,
            moved if moved is not None else carry.clear_seq,
        ),
        named=named,
    )


def _prepare(
    messages: Sequence[Message],
    plan: ContextPlan,
    files: Mapping[str, FileView],
    citations: CitationMap,
    tool_results: Mapping[str, ToolResultView],
) -> tuple[Work, bool]:
    """The visible history (the newest user message kept even under a compaction) as
    pieces, and whether a search tool ran in the current turn."""
    read = plan.read
    through = read.compaction.through_seq if read.compaction is not None else None
    u_seq = newest_user_seq(messages)
    history = visible_history(messages, through, [u_seq] if u_seq is not None else [])
    split = split_turn(history)
    u = split.start if split.start < len(history) else None
    prompts = plan.prompts
    searched = search_ran(
        history[u:] if u is not None else [],
        turn_open=split.open,
        tools_used=prompts.tools_used,
        search_tools=prompts.search_tools,
    )
    work = build_work(
        history,
        u=u,
        target=plan.target,
        limits=read.filter.limits,
        files=files,
        citations=citations,
        tool_views=tool_results,
    )
    return work, searched


def _parts(plan: ContextPlan, searched: bool, citations: CitationMap, bound: Bound | None) -> Parts:
    """S, CA, R and the summary; for a bound target, S's date line and citation section
    as the turn first sent them and each reminder where it was first sent (pinned)."""
    target = plan.target
    prompts = plan.prompts
    now = bound_reasoning.pinned_now(bound) if bound is not None else plan.now
    search_ran = bound.pins.searched if bound is not None else searched
    system = system_text(prompts, now=now, tools=plan.tools, search_ran=search_ran)
    ca = custom_agent_text(prompts)
    reminder = reminder_text(prompts, search_ran=searched) if bound is None else None
    summary_piece = None
    summary_text = None
    if plan.read.summary:
        summary_text = plan.read.compaction.summary if plan.read.compaction else None
        summary_piece = text_piece(plan.read.summary[0].text(), "user", "summary", target)
    return Parts(
        system=text_piece(system, "system", "system", target) if system else None,
        custom_agent=text_piece(ca, "user", "custom_agent", target) if ca else None,
        reminder=text_piece(reminder, "user", "reminders", target) if reminder else None,
        summary=summary_piece,
        summary_text=summary_text,
        pinned_reminders=bound_reasoning.reminder_pieces(bound, plan) if bound else [],
    )


def _order(
    work: Work, parts: Parts, fill: layout.Fill
) -> tuple[list[Piece], int, list[int | None]]:
    """The pieces top to bottom, where the newest turn starts (CA, P, F, U, …), or its
    tool loop when that starts before it (`Work.loop_before_turn`), and the history
    index each piece renders (None: a generated part). A pinned reminder goes after the
    message it was first sent after."""
    history = work.history
    kept = sorted(fill.kept)
    pieces: list[Piece] = [parts.system] if parts.system is not None else []
    indices: list[int | None] = [None] * len(pieces)
    lead = 0  # the history's own leading system messages go with the system prompt
    while lead < len(kept) and history[kept[lead]].role == "system":
        pieces.append(work.pieces[kept[lead]])
        indices.append(kept[lead])
        lead += 1
    pieces += [p for p in (parts.summary, *parts.preamble) if p is not None]
    indices += [None] * (len(pieces) - len(indices))
    pinned = list(parts.pinned_reminders)
    turn_start: int | None = None
    stable: int | None = None  # where the stable prefix must end, when before the turn
    mark = work.loop_before_turn()
    moving = [p for p in (parts.custom_agent, parts.project) if p is not None]
    for i in kept[lead:]:
        while pinned and pinned[0][0] < history[i].seq:
            pieces.append(pinned.pop(0)[1])
            indices.append(None)
        if stable is None and mark is not None and i >= mark:
            stable = len(pieces)
        if i == work.u:
            turn_start = len(pieces)
            pieces += moving
        if i in work.docs:
            pieces.append(work.docs[i])
        pieces.append(work.pieces[i])
        indices += [None] * (len(pieces) - len(indices) - 1) + [i]
    if turn_start is None:  # no user message: CA and P go last, before R
        turn_start = len(pieces)
        pieces += moving
    pieces += [p for _, p in pinned]
    if parts.reminder is not None:
        pieces.append(parts.reminder)
    indices += [None] * (len(pieces) - len(indices))
    return pieces, turn_start if stable is None else min(stable, turn_start), indices


def _cite(pieces: list[Piece], citations: CitationMap, plan: ContextPlan) -> list[Piece]:
    """Final citation ids for the documents sent (new ones numbered in order of
    appearance); documents sized with provisional ids are re-rendered when theirs moved."""
    keys = [d.source_key for p in pieces if p.documents for d in p.documents]
    final = citations.assign(keys)
    out: list[Piece] = []
    for piece in pieces:
        documents = piece.documents
        moved = documents and any(
            citations.provisional(d.source_key) != final[d.source_key] for d in documents
        )
        if not documents or not moved:
            out.append(piece)
        elif piece.category == "project":
            out.append(render_project(plan.project, documents, final, plan.target) or piece)
        else:
            out.append(documents_piece(documents, final, piece.category, plan.target))
    return out


def _finish(
    work: Work,
    parts: Parts,
    *,
    fill: layout.Fill,
    plan: ContextPlan,
    citations: CitationMap,
    limit: int,
    bound: Bound | None = None,
    cut_seq: int | None = None,
) -> Rendered:
    """Order, cite, ask the binding rule (a bound target) and render; should the honest
    count still pass `limit`, leave out the oldest unprotected history unit (none left:
    what may still give way by what is over, `layout.give_way`) and render again."""
    hard = plan.read.filter.budget.hard_limit_tokens
    while True:
        pieces, turn_start, indices = _order(work, parts, fill)
        cited = _cite(pieces, citations, plan)
        if bound is not None and bound_reasoning.decide(
            bound, work, cited, indices, plan=plan, cut_seq=cut_seq
        ):
            pieces, turn_start, indices = _order(work, parts, fill)  # reasoning withheld
            cited = _cite(pieces, citations, plan)
        rendered = render(cited, turn_start=turn_start, target=plan.target)
        if rendered.token_count <= limit:
            return rendered
        if any(i not in fill.protected for i in fill.kept):
            layout.fit_history(work, fill.kept, fill.protected, _history_cost(work, fill) - 1)
        elif not layout.give_way(work, fill, rendered.token_count - limit, hard=limit >= hard):
            fill.warnings.append(
                f"the context ({rendered.token_count} tokens) is over its limit ({limit}): "
                "what remains cannot be left out"
            )
            return rendered


def _history_cost(work: Work, fill: layout.Fill) -> int:
    return sum(work.cost(i) for i in fill.kept)


def _named(work: Work, fill: layout.Fill) -> list[str]:
    """The ids of the tool results sent that name their workspace path (stand-ins of
    large results, previews, stubs): each path must answer 200 once the answer is out."""
    return [str(work.history[i].id) for i in sorted(work.named & fill.kept)]
