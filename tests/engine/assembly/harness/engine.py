"""The one adapter between the harness and the engine: every engine call is here.

It does in-process what `service/history/context.py` does around the engine for one
`GET …/context`, without a database: messages are "stored" as the append does (token
count of their JSON for the conversation's model; a tool result over
TOOL_RESULT_OFFLOAD_TOKENS written to the workspace and shown as a preview), the read is
planned (`plan_context`), loaded (a window of a long history, or what a compaction does
not cover), assembled (`assemble_context`, again with chunks when a whole project did
not fit its room), and what the service stores after an answer is carried to the next
read of the same conversation (`Stored`: the cut point and the clearing line, which
`Assembled.carry` gives for the next call; citation ids; the workspace, where every
tool result an answer names by its path is written before the answer is returned, as
`service.history.context_tool_results.ensure_written` does). Hierarchical memory is not
loaded from a store: the engine builds it from the messages (`memory=None`).

When the engine's interface changes, this module is what changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from contextq.assembly import (
    Assembled,
    Carry,
    CitationMap,
    ContextPlan,
    ProjectContext,
    ProjectDocument,
    ProjectNote,
    assemble_context,
    file_key,
    newest_user_seq,
    plan_context,
)
from contextq.assembly.binding import applies as binding_applies
from contextq.assembly.clearing import STUBS
from contextq.assembly.pieces import MESSAGE_COUNTS
from contextq.assembly.preview import preview_text
from contextq.assembly.tool_results import ToolResultView, result_path
from contextq.history import Message, count_message_tokens
from contextq.history.chains import unit_at
from contextq.history.context import visible_history
from contextq.history.message_tokens import serialise
from contextq.settings import Settings
from contextq.tokens import DEFAULT_ENCODING, count_tokens, encoding_name_for_model
from tests.engine.assembly.harness.cases import Case, ProjectSpec

NOW = datetime(2026, 11, 23, 9, 30, tzinfo=UTC)
CONVERSATION_ID = "c-harness"


@lru_cache(maxsize=64)
def settings_for(window: int, auto: bool) -> Settings:
    return Settings(MAX_CONTEXT_TOKENS=window, ENABLE_AUTO_COMPRESSION=auto)


@dataclass(slots=True)
class Stored:
    """What the service keeps per conversation and model between two reads."""

    carry: Carry = field(default_factory=Carry)  # the cut point and the clearing line
    citations: dict[str, int] = field(default_factory=dict)
    workspace: set[str] = field(default_factory=set)  # relative paths that answer 200

    def carried(self, context_plan: ContextPlan) -> Carry:
        """What the service hands the engine (`service.history.context._assemble`):
        nothing for `noop` or a skipped filter (but a bound target's binding state and
        clearing line); the cut point for `token_budget` only."""
        f = context_plan.read.filter
        bound = binding_applies(context_plan.target)
        binding = self.carry.binding if bound else None
        if f.strategy == "noop" or f.skipped:  # a bound target's binding state and line
            return Carry(clear_seq=self.carry.clear_seq if bound else None, binding=binding)
        cut = self.carry.cut_seq if f.strategy == "token_budget" else None
        return replace(self.carry, cut_seq=cut, binding=binding)


@dataclass(slots=True)
class Read:
    """One answer and what the invariants need to judge it."""

    case: Case
    index: int  # which read of the case
    answer: dict[str, Any]
    history: list[Message]  # the stored history so far (token counts set)
    loaded: list[Message]  # what the read handed to the engine
    views: dict[str, ToolResultView]  # previews of large tool results, by message id
    workspace: frozenset[str]  # workspace paths that exist when the answer is returned
    settings: Settings
    plan: ContextPlan
    moved: bool  # the stored cut point or clearing line moved with this answer
    carried: Carry = field(default_factory=Carry)  # the state this read was given


def store(messages: Sequence[Message], model: str) -> list[Message]:
    """`messages` as the append stores them (their token count for `model`, set once):
    a default-form message its Chat JSON, a native row its payload's JSON in the
    model's encoding (`service.history.messages._prepare`)."""
    for m in messages:
        if m.token_count is not None:  # counted once per case (its messages never change)
            continue
        if m.native is None:
            m.token_count = count_message_tokens(m.to_openai(), model)
        else:
            payload = serialise(m.native.payload)
            m.token_count = count_tokens(payload, encoding_name_for_model(model))
    return list(messages)


def large_results(history: Sequence[Message], settings: Settings) -> dict[str, ToolResultView]:
    """Tool results over TOOL_RESULT_OFFLOAD_TOKENS: written to the workspace at append,
    shown as a preview (the service's fallback preview: head and tail of the text)."""
    views = {}
    for m in history:
        if m.role == "tool" and (m.token_count or 0) > settings.TOOL_RESULT_OFFLOAD_TOKENS:
            text = m.text()
            preview, _, _ = preview_text(text, settings.MAX_TOKENS_PER_FILE, DEFAULT_ENCODING)
            size = len(text.encode("utf-8", "surrogatepass"))
            views[str(m.id)] = ToolResultView(result_path(m), size, preview)
    return views


def plan(case: Case, settings: Settings, history: Sequence[Message]) -> ContextPlan:
    return plan_context(
        settings=settings,
        now=NOW,
        prompts=case.prompts,
        model=case.model,
        stored_model=case.model,
        tools=case.tools,
        compaction=case.compaction,
        history_tokens=sum(m.token_count or 0 for m in history),
        strategy=case.strategy,
        options=case.options,
        context_threshold=case.threshold,
        force_filter=case.force_filter,
        skip_filter=case.skip_filter,
        format=case.format,
        conversation_id=CONVERSATION_ID,
    )


def load(
    history: list[Message], context_plan: ContextPlan, cut: int | None = None
) -> tuple[list[Message], list[str]]:
    """What `service.history.context._load` reads: everything; what a compaction does not
    cover; or a window of the newest messages (with the system and pinned ones and the
    newest user message before it), from the carried cut point `cut` (less the chain
    margin) when there is one. Returns the messages and the ids left unread."""
    read = context_plan.read
    u_seq = newest_user_seq(history)
    also = [u_seq] if u_seq is not None else []
    if read.compaction is not None:
        return visible_history(history, read.compaction.through_seq, also), []
    if read.window is None or not history:
        return list(history), []
    first_past = None
    if read.window.past_tokens is not None:
        total = 0
        for m in history:
            total += m.token_count or 0
            if total > read.window.past_tokens:
                first_past = m.seq
                break
    start = read.window.start(last_seq=history[-1].seq, first_seq_past=first_past)
    if start is not None and cut is not None:  # the kept history starts at the cut
        start = cut - read.window.margin
        start = start if start > 1 else None
    if start is None:
        return list(history), []
    start = _chain_start(history, start)
    loaded = visible_history(history, start - 1, also)
    kept = {m.seq for m in loaded}
    removed = [str(m.id) for m in history if m.seq < start and m.seq not in kept]
    return loaded, removed


def _chain_start(history: list[Message], start: int) -> int:
    """`store.message_cache.load_context_messages`: a window never starts inside a tool
    chain (docs/history.md#history-strategies: never a result without its call); it starts at the
    chain's call."""
    index = next((i for i, m in enumerate(history) if m.seq >= start), None)
    if index is None or history[index].role != "tool":
        return start
    return history[unit_at(history, index).start].seq


def project_context(
    spec: ProjectSpec | None, *, room: int, encoding: str, chunks_only: bool
) -> ProjectContext:
    """What `service.projects.project_documents` gives: every file whole when all fit
    `room`, else chunks best first (here: in file order)."""
    if spec is None:
        return ProjectContext()
    notes = tuple(
        ProjectNote(f, f"{f} is still processing; it joins once ready", True) for f in spec.pending
    )
    notes += tuple(ProjectNote(f, f"{f} failed to process: unreadable") for f in spec.failed)
    whole = [
        ProjectDocument(f"file:{i}", i, t, c, "document; nothing left out")
        for i, t, c in spec.files
    ]
    cost = sum(count_tokens(d.contents, encoding) + 30 for d in whole)
    if not chunks_only and cost <= room:
        return ProjectContext(spec.instructions, tuple(whole), "whole", notes)
    chunks = []
    for file_id, title, contents in spec.files:
        size = spec.chunk_tokens * 4
        for n, start in enumerate(range(0, len(contents), size)):
            chunks.append(
                ProjectDocument(
                    f"chunk:{file_id}-{n}",
                    file_id,
                    title,
                    contents[start : start + size],
                    f"{title}, chunk {n}",
                    {"index": n, "page": None},
                )
            )
    return ProjectContext(spec.instructions, tuple(chunks), "chunks", notes)


def new_conversation() -> Stored:
    """A fresh conversation's stored state. The engine remembers message counts by
    (id, seq, stored count, hash of a text content) and the stubs of cleared results by
    (id, seq, target): ids are unique in the store, but the harness's ids (`m<seq>`)
    repeat from case to case, and a message would be taken for another case's (a stub
    answering another call id): both memories are emptied per case."""
    MESSAGE_COUNTS.clear()
    STUBS.clear()
    return Stored()


def read(case: Case, index: int, stored: Stored) -> Read:
    """Read `index` of `case` as the service would, and carry what it stores."""
    settings = settings_for(case.window, case.auto)
    history = store(case.messages_until(index), case.model)
    views = large_results(history, settings)
    stored.workspace.update(v.path for v in views.values())  # written at append
    context_plan = plan(case, settings, history)
    carried = stored.carried(context_plan)
    loaded, removed_before = load(history, context_plan, carried.cut_seq)
    assembled = _assemble(case, context_plan, loaded, views, stored, carried)
    failed_open = assembled.error is not None and context_plan.read.window is not None
    if failed_open:  # fail-open is the whole history, not the window
        whole = replace(context_plan, read=context_plan.read.fail_open())
        loaded, removed_before = list(history), []
        again = Carry(None, carried.clear_seq, carried.binding)
        assembled = _assemble(case, whole, loaded, views, stored, again)
        assembled.cut_seq = None
    answer = assembled.answer
    answer["removed_message_ids"] = removed_before + answer["removed_message_ids"]
    moved = _carry(assembled, stored, loaded, keep_cut=failed_open)
    workspace = frozenset(stored.workspace)
    return Read(
        case,
        index,
        answer,
        history,
        loaded,
        views,
        workspace,
        settings,
        context_plan,
        moved,
        carried,
    )


def _assemble(
    case: Case,
    context_plan: ContextPlan,
    loaded: list[Message],
    views: dict[str, ToolResultView],
    stored: Stored,
    carried: Carry,
) -> Assembled:
    f = context_plan.read.filter
    upper = int(f.project_share * max(0, f.budget.hard_limit_tokens))
    encoding = context_plan.target.encoding
    files = {fid: case.files[fid] for m in loaded for fid in m.file_ids if fid in case.files}

    def run(project: ProjectContext) -> Assembled:
        keys = [file_key(fid) for fid in files] + [d.source_key for d in project.documents]
        known = {k: stored.citations[k] for k in keys if k in stored.citations}
        citations = CitationMap(known, max(stored.citations.values(), default=0))
        with_project = replace(context_plan, project=project)
        return assemble_context(
            [replace(m) for m in loaded],
            with_project,
            files=files,
            citations=citations,
            cut_seq=carried.cut_seq,
            clear_seq=carried.clear_seq,
            binding=carried.binding,
            conversation_id=CONVERSATION_ID,
            tool_results=views,
        )

    assembled = run(project_context(case.project, room=upper, encoding=encoding, chunks_only=False))
    if assembled.project_room is not None:
        assembled = run(
            project_context(
                case.project, room=assembled.project_room, encoding=encoding, chunks_only=True
            )
        )
    return assembled


def _carry(assembled: Assembled, stored: Stored, loaded: list[Message], *, keep_cut: bool) -> bool:
    """Keep what the service keeps after an answer; whether the cut point or the
    clearing line moved. The next call gets `Assembled.carry` (for the parts the
    strategy uses: `Stored.carried`); a fail-open answer keeps the stored cut point. Every
    tool result the answer names by its path (stubs, previews) is written before the
    answer is returned (`ensure_written`)."""
    stored.citations.update(assembled.new_citations)
    carry = assembled.carry
    cut = stored.carry.cut_seq if keep_cut or carry.cut_seq is None else carry.cut_seq
    clear = carry.clear_seq if carry.clear_seq is not None else stored.carry.clear_seq
    stored.carry = replace(carry, cut_seq=cut, clear_seq=clear)  # the rest as the engine gave
    by_id = {str(m.id): m for m in loaded}
    for named in assembled.named:
        if named in by_id:
            stored.workspace.add(result_path(by_id[named]))
    return assembled.cut_seq is not None or assembled.clear_seq is not None
