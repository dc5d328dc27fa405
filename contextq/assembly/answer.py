"""The context answer's fields (docs/history.md#the-answer): the counts, what was left out and why,
the files and citations, around the rendered list."""

from __future__ import annotations

from typing import Any

from contextq.assembly import layout
from contextq.assembly.attachments import Document, FileNote
from contextq.assembly.citations import CitationMap
from contextq.assembly.plan import ContextPlan
from contextq.assembly.render import reasoning_dropped
from contextq.assembly.select import Ran
from contextq.assembly.wire import Rendered
from contextq.assembly.work import Work


def _notes(work: Work, fill: layout.Fill) -> list[FileNote]:
    """Every attached file of a message sent that is not included, once, with its reason."""
    seen: dict[str, FileNote] = {}
    for i in sorted(fill.kept):
        found = work.attached.get(i)
        for note in found.notes if found is not None else ():
            seen.setdefault(note.file_id, note)
    kept_files = {f for i in fill.kept for f in work.history[i].file_ids}
    for note in work.notes:
        if note.file_id in kept_files:
            seen.setdefault(note.file_id, note)
    return list(seen.values())


def _citations(rendered: Rendered, citations: CitationMap) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    final = {**citations.stored, **citations.assigned}
    for piece in rendered.kept:
        for document in piece.documents or ():
            if document.source_key in seen:
                continue
            seen.add(document.source_key)
            out.append(_citation(document, final[document.source_key]))
    return out


def _citation(document: Document, citation_id: int) -> dict[str, Any]:
    return {
        "citation_id": citation_id,
        "file_id": document.file_id,
        "title": document.title,
        "source": document.source,
        "chunk": dict(document.chunk) if document.chunk is not None else None,
    }


def _cleared(work: Work, fill: layout.Fill) -> list[str]:
    """The ids of the tool results sent as stubs."""
    kept = {str(work.history[i].id) for i in fill.kept}
    return [c for c in work.cleared if c in kept]


def _before(before: int, rendered: Rendered, fill: layout.Fill, work: Work) -> int:
    """The context before filtering: the answer itself when nothing was left out, cut
    or cleared (exact), else the sum of every part's cost alone (merged Anthropic turns
    cost a little less)."""
    whole = len(fill.kept) == len(work.history) and not fill.warnings and not work.notes
    whole = whole and not work.cleared
    return rendered.token_count if whole else before


def answer_fields(
    work: Work,
    fill: layout.Fill,
    *,
    result: Ran | None,
    plan: ContextPlan,
    rendered: Rendered,
    before: int,
    runs: bool,
    conversation_id: str | None,
    citations: CitationMap,
) -> dict[str, Any]:
    f = plan.read.filter
    limits = f.limits
    notes = _notes(work, fill)
    noted = {n.file_id for n in notes}
    notes += [
        FileNote(n.file_id, n.reason, n.pending)
        for n in plan.project.notes
        if n.file_id not in noted
    ]
    history = work.history
    filtered = runs and (result is None or result.error is None)
    window = max(1, limits.context_window)
    answer: dict[str, Any] = {
        "conversation_id": conversation_id,
        "model": limits.model or limits.catalog_id or "",
        "provider": limits.provider,
        "format": plan.target.format,
        "context_limit": limits.context_window,
        "budget_tokens": f.budget.budget_tokens,
        "max_output_tokens": f.budget.max_output_tokens,
        "token_count": rendered.token_count,
        **limits.counting.report(),  # how it counted: exact, or calibrated (docs/token-counting.md)
        "token_breakdown": rendered.breakdown,
        "strategy": f.strategy,
        "filtered": filtered,
        "compaction_id": plan.read.compaction.id if plan.read.compaction else None,
        "kept_message_count": len(fill.kept),
        "removed_message_ids": [
            str(m.id) for i, m in enumerate(history) if i not in fill.kept and m.id is not None
        ],
        "pending_file_ids": [n.file_id for n in notes if n.pending],
        "failed_file_ids": [n.file_id for n in notes if not n.pending],
        "file_notes": [{"file_id": n.file_id, "reason": n.reason} for n in notes],
        "citations": _citations(rendered, citations),
        "tools": list(plan.tools_out),
        "cleared_tool_result_ids": _cleared(work, fill),
        "reasoning_dropped": (dropped := reasoning_dropped(rendered.kept)),
        "usage_before": round(_before(before, rendered, fill, work) / window, 4),
        "usage_after": round(rendered.token_count / window, 4),
        "filter_duration_ms": result.duration_ms if result is not None else 0.0,
        "error": result.error if result is not None else None,
        "warnings": _warnings([*f.warnings, *fill.warnings], dropped["prefix_changed"]),
        **rendered.fields,  # the list and the format's own fields (system, …)
    }
    return answer


def _warnings(warnings: list[str], prefix_changed: int) -> list[str]:
    """The answer's warnings, each once; reasoning the binding rule left out is always
    said with its count (a read that newly left it out names the cause; a later one
    says it stays out)."""
    said = list(dict.fromkeys(warnings))
    if prefix_changed and not any(str(prefix_changed) in w and "thinking" in w for w in said):
        said.append(
            f"thinking left out because its prefix changed: {prefix_changed} reasoning "
            "blocks of earlier steps are not sent (a block once left out stays out); the "
            "model will continue without them"
        )
    return said
