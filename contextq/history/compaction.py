"""Compaction (docs/history.md#compaction): summarise the history up to a point, keep the rest
verbatim.

`plan_compaction` picks `through_seq`: the newest messages that fit
`keep_recent_tokens` stay verbatim after it, and the cut falls between units, so a
tool call and its results are never split. Pinned and system messages (with their
tool chains) inside the covered range stay verbatim too: they are not summarised and
the context endpoint sends them as they are.

`compact` runs the plan with a summariser, given the conversation's memory: its goal,
subtasks, phase, decisions and error patterns (`MemoryFacts`) are written into the summary
verbatim. Incremental: the previous summary is folded in as the first input (a summary of
summaries), so the cost grows with what is new. The summariser's input is capped at
`SUMMARIZER_INPUT_MAX_TOKENS`: longer inputs are summarised in chunks, then the chunk
summaries are summarised. If the summariser raises, it falls back to truncation (25%
head / 75% tail) and says so in `fallback_reason`.

Before a summary is accepted it is checked (`retention`): the goal, each open subtask,
each decision and each error pattern seen 3 times or more must be in it; what is missing
is appended, and the outcome records `retention` (share present before repair) and
`repaired` (what was appended). Without a memory, the checked items are those the
previous summary held.

Provenance (docs/provenance.md): whichever summariser wrote it, every structured item of the summary
is checked against the messages this run read (`provenance.SourceIndex`): seqs that name
no message read (or one that holds none of the item's words) are dropped, an item left
without any is matched back to its source by its key terms, or marked `(#?)` and counted
in `unsourced_items`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from contextq.errors import SummarizerError
from contextq.history.chains import unit_at
from contextq.history.harvest import SUMMARY_MARKER
from contextq.history.message_tokens import MESSAGE_OVERHEAD_TOKENS, token_count
from contextq.history.pinned import protected_anchors
from contextq.history.provenance import SourceIndex, summary_items
from contextq.history.retention import Retention, check_retention, fit_summary, repair
from contextq.history.summarizers import Summarizer, truncate_history
from contextq.history.summary_format import MemoryFacts, facts_from_memory, facts_from_summary
from contextq.history.types import Message
from contextq.settings import Settings
from contextq.strategy_options import DEFAULT_MAX_PINNED
from contextq.tokens import DEFAULT_ENCODING, count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from contextq.history.memory import HierarchicalMemory

log = logging.getLogger("contextq.history.compaction")

MIN_SUMMARY_TOKENS = 256


@dataclass(slots=True)
class CompactionPlan:
    through_seq: int  # every message with seq ≤ through_seq is covered
    to_summarize: list[Message]  # covered messages that go into the summary
    verbatim: list[Message]  # covered messages kept as they are (pinned, system, their chains)
    tail: list[Message]  # messages after through_seq (kept verbatim)
    summary_max_tokens: int
    covered_tokens: int  # tokens of every covered message (summarised + verbatim)


@dataclass(slots=True)
class CompactionOutcome:
    """What the service stores as a CompactionResult row."""

    method: Literal["summary", "truncation"]
    summary: str
    through_seq: int
    original_message_count: int  # covered messages (+ 1 for the previous summary folded in)
    compacted_message_count: int  # 1 (the summary) + verbatim ones
    original_tokens: int  # tokens of the covered messages (+ the previous summary's)
    compacted_tokens: int  # summary + verbatim tokens
    summary_tokens: int
    summarized_message_count: int
    verbatim_ids: list[str]
    summarizer: str  # name of the summariser used (or "truncation")
    chunks: int  # summariser calls for the first stage (1 = no chunking)
    duration_ms: float
    fallback_reason: str | None = None  # why truncation was used
    warnings: list[str] = field(default_factory=list)
    retention: float = 1.0  # share of the checked items present before repair
    repaired: list[str] = field(default_factory=list)  # the items appended ("goal: …", …)
    checked_items: int = 0  # goal + open subtasks + decisions + error patterns (count ≥ 3)
    structured_items: int = 0  # items of the goal, decisions, errors, files, state sections
    unsourced_items: int = 0  # of them, those whose source message is unknown: `(#?)`


def plan_compaction(
    messages: Sequence[Message],
    *,
    target_tokens: int,
    keep_recent_tokens: int | None = None,
    min_recent_messages: int = 1,
    max_pinned: int = DEFAULT_MAX_PINNED,
) -> CompactionPlan | None:
    """Choose what to summarise so that summary + verbatim messages ≈ `target_tokens`.

    `keep_recent_tokens` (default half the target) is the room for the newest messages
    kept verbatim; at least `min_recent_messages` stay. Returns None when there is
    nothing to summarise.
    """
    if target_tokens <= 0:
        raise ValueError("target_tokens must be positive")
    if keep_recent_tokens is None:
        keep_recent_tokens = target_tokens // 2
    used = 0
    kept_messages = 0
    cut = len(messages)  # index of the first tail message
    i = len(messages) - 1
    while i >= 0:
        unit = unit_at(messages, i)
        cost = sum(token_count(messages[j]) for j in range(unit.start, unit.end + 1))
        if kept_messages >= min_recent_messages and used + cost > keep_recent_tokens:
            break
        used += cost
        kept_messages += unit.end - unit.start + 1
        cut = unit.start
        i = unit.start - 1
    if cut == 0:
        return None
    covered = messages[:cut]
    verbatim_idx = _verbatim_indices(covered, max_pinned)
    to_summarize = [m for j, m in enumerate(covered) if j not in verbatim_idx]
    if not to_summarize:
        return None
    verbatim = [covered[j] for j in sorted(verbatim_idx)]
    verbatim_tokens = sum(token_count(m) for m in verbatim)
    summary_max = max(MIN_SUMMARY_TOKENS, target_tokens - used - verbatim_tokens)
    return CompactionPlan(
        through_seq=covered[-1].seq,
        to_summarize=to_summarize,
        verbatim=verbatim,
        tail=list(messages[cut:]),
        summary_max_tokens=summary_max,
        covered_tokens=sum(token_count(m) for m in covered),
    )


def _verbatim_indices(covered: Sequence[Message], max_pinned: int) -> set[int]:
    """The protected anchors' whole spans (their chains, orphan results included)."""
    keep: set[int] = set()
    for _, unit in protected_anchors(covered, max_pinned):
        keep.update(range(unit.start, unit.end + 1))
    return keep


def compact(
    messages: Sequence[Message],
    summarizer: Summarizer | None,
    settings: Settings,
    *,
    memory: HierarchicalMemory | None = None,
    previous_summary: str | None = None,
    target_tokens: int | None = None,
    keep_recent_tokens: int | None = None,
    encoding: str = DEFAULT_ENCODING,
    summary_ratio: float | None = None,
) -> CompactionOutcome | None:
    """Compact `messages` (the history after the previous compaction, oldest first).

    `memory` (the conversation's) gives the sections the summary writes verbatim and
    checks; `previous_summary` (the newest stored summary) is folded into the new one.
    `summarizer=None` means truncation only. `summary_ratio` sizes the summary at that
    share of the tokens it stands in for (the summarised messages and the folded
    summary) instead of what the target leaves. Returns None when there is nothing to
    compact. Never raises for a summariser failure: falls back to truncation.
    """
    started = time.perf_counter()
    target = target_tokens or settings.HISTORY_COMPACTION_TARGET_TOKENS
    plan = plan_compaction(
        messages,
        target_tokens=target,
        keep_recent_tokens=keep_recent_tokens,
        max_pinned=settings.MAX_PINNED_MESSAGES,
    )
    if plan is None:
        return None
    facts = facts_from_memory(memory) if memory else facts_from_summary(previous_summary)
    inputs = list(plan.to_summarize)
    if previous_summary:
        inputs.insert(0, summary_input(previous_summary, encoding))
    room = plan.summary_max_tokens
    if summary_ratio is not None:
        read = sum(token_count(m) for m in inputs)
        room = max(MIN_SUMMARY_TOKENS, int(read * summary_ratio))
    summary, chunks, fallback_reason = _summarise(
        inputs, summarizer, settings, room=room, encoding=encoding, facts=facts
    )
    truncated = summarizer is None or fallback_reason is not None
    retention = check_retention(summary, facts)
    summary, repaired = repair(summary, retention)
    sources = SourceIndex([*inputs, *plan.verbatim, *plan.tail], also_valid=fact_seqs(facts))
    summary, _ = sources.resolve(summary)
    if count_tokens(summary, encoding) > room:
        summary = _make_room(summary, inputs, retention, room, encoding, truncated=truncated)
    # what this run read, docs/history.md#compaction
    folded = inputs[0] if previous_summary else None
    return _outcome(
        plan,
        summary,
        folded=folded,
        encoding=encoding,
        summarizer="truncation" if truncated else str(getattr(summarizer, "name", "")),
        truncated=truncated,
        chunks=chunks,
        started=started,
        fallback_reason=fallback_reason,
        retention=retention,
        repaired=repaired,
    )


def _outcome(
    plan: CompactionPlan,
    summary: str,
    *,
    folded: Message | None,
    encoding: str,
    summarizer: str,
    truncated: bool,
    chunks: int,
    started: float,
    fallback_reason: str | None,
    retention: Retention,
    repaired: list[str],
) -> CompactionOutcome:
    summary_tokens = count_tokens(summary, encoding)
    verbatim_tokens = sum(token_count(m) for m in plan.verbatim)
    items = summary_items(summary)
    return CompactionOutcome(
        method="truncation" if truncated else "summary",
        summary=summary,
        through_seq=plan.through_seq,
        original_message_count=len(plan.to_summarize) + len(plan.verbatim) + bool(folded),
        compacted_message_count=1 + len(plan.verbatim),
        original_tokens=plan.covered_tokens + (token_count(folded) if folded else 0),
        compacted_tokens=summary_tokens + MESSAGE_OVERHEAD_TOKENS + verbatim_tokens,
        summary_tokens=summary_tokens,
        summarized_message_count=len(plan.to_summarize),
        verbatim_ids=[str(m.id) for m in plan.verbatim if m.id is not None],
        summarizer=summarizer,
        chunks=chunks,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        fallback_reason=fallback_reason,
        retention=retention.share,
        repaired=repaired,
        checked_items=retention.checked,
        structured_items=len(items),
        unsourced_items=sum(1 for item in items if not item.sourced),
    )


def fact_seqs(facts: MemoryFacts) -> set[int]:
    """Every seq the facts cite (they were recorded from real messages)."""
    seqs = {s for group in facts.sources.values() for s in group}
    return seqs | {s for decision in facts.decisions for s in decision.seqs}


def _summarise(
    inputs: list[Message],
    summarizer: Summarizer | None,
    settings: Settings,
    *,
    room: int,
    encoding: str,
    facts: MemoryFacts,
) -> tuple[str, int, str | None]:
    """(summary, first-stage calls, fallback reason): the summariser's, or the 25/75
    truncation when there is none or it fails (a failed summary is never stored)."""
    if summarizer is None:
        reason = "no summariser configured (SUMMARIZER=truncation)"
    else:
        try:
            summary, chunks = summarize_capped(
                inputs,
                summarizer,
                max_tokens=room,
                input_cap=settings.SUMMARIZER_INPUT_MAX_TOKENS,
                encoding=encoding,
                facts=facts,
            )
            return summary, chunks, None
        except Exception as exc:
            if not isinstance(exc, SummarizerError):
                log.exception("summariser %s crashed", summarizer.name)
            reason = f"{summarizer.name} summariser failed: {exc}"
            log.warning("compaction falls back to truncation: %s", reason)
    return truncate_history(inputs, max_tokens=room, encoding=encoding).text, 0, reason


def _make_room(
    summary: str,
    inputs: Sequence[Message],
    retention: Retention,
    room: int,
    encoding: str,
    *,
    truncated: bool,
) -> str:
    """A repaired summary over its room: a truncation is redone smaller around the
    appended items; a structured summary is cut by `fit_summary` (narrative first)."""
    if not truncated:
        return fit_summary(summary, room, encoding)
    appended = count_tokens(repair("", retention)[0], encoding)
    smaller = truncate_history(inputs, max_tokens=max(64, room - appended - 8), encoding=encoding)
    text, _ = repair(smaller.text, retention)
    return fit_summary(text, room, encoding)


def summary_input(summary: str, encoding: str = DEFAULT_ENCODING, seq: int = -1) -> Message:
    """A previous (or a chunk's) summary as a summariser input message."""
    text = f"Summary of the conversation before this point:\n{summary}"
    return Message(
        role="user",
        content=text,
        seq=seq,
        name=SUMMARY_MARKER,
        token_count=count_tokens(text, encoding) + MESSAGE_OVERHEAD_TOKENS + 8,
    )


def summarize_capped(
    messages: Sequence[Message],
    summarizer: Summarizer,
    *,
    max_tokens: int,
    input_cap: int,
    encoding: str = DEFAULT_ENCODING,
    facts: MemoryFacts | None = None,
    _depth: int = 0,
) -> tuple[str, int]:
    """Summarise with every summariser call's input ≤ `input_cap` tokens.

    Over the cap, the messages are split in chunks (whole messages; one message over
    the cap is cut), each chunk is summarised to at most `input_cap // chunks`, and the
    chunk summaries are summarised again. Returns (summary, first-stage call count).
    """
    chunks = _chunks(messages, input_cap, encoding)
    if _depth >= 4:
        raise SummarizerError("summariser input does not shrink under SUMMARIZER_INPUT_MAX_TOKENS")
    if len(chunks) == 1:
        text = summarizer.summarize(
            chunks[0], max_tokens=max_tokens, encoding=encoding, facts=facts
        )
        return text, 1
    per_chunk = max(MIN_SUMMARY_TOKENS, min(max_tokens, input_cap // len(chunks) - 16))
    partials = []
    for chunk in chunks:
        text = summarizer.summarize(chunk, max_tokens=per_chunk, encoding=encoding, facts=facts)
        partials.append(summary_input(text, encoding, seq=chunk[-1].seq))
    summary, _ = summarize_capped(
        partials,
        summarizer,
        max_tokens=max_tokens,
        input_cap=input_cap,
        encoding=encoding,
        facts=facts,
        _depth=_depth + 1,
    )
    return summary, len(chunks)


def _chunks(messages: Sequence[Message], cap: int, encoding: str) -> list[list[Message]]:
    chunks: list[list[Message]] = [[]]
    used = 0
    for original in messages:
        message, cost = original, token_count(original)
        if cost > cap:  # one message alone over the cap: cut its text
            text, _, kept = truncate_to_tokens(original.text(), max(1, cap - 64), encoding)
            message = Message(
                role=original.role,
                content=text + " …[cut]",
                seq=original.seq,
                kind=original.kind,
                pinned=original.pinned,
                token_count=kept + 64,
            )
            cost = kept + 64
        if chunks[-1] and used + cost > cap:
            chunks.append([])
            used = 0
        chunks[-1].append(message)
        used += cost
    return chunks
