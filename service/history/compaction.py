"""Compaction (docs/history.md#compaction): when it is due, asking for it, running it, the beat
sweep.

- `request_compaction`: a `compact_conversation` job, enqueued once its row commits
  (a failed publish marks the job failed; the sweep tries again later).
- `run_compaction`: one per conversation at a time (a Redis lock held across workers;
  a run that finds it taken does nothing and its job succeeds saying so). It re-reads
  the rows, compacts the messages after the newest compaction (folding that summary
  into the new one, so each run works on a bounded batch), stores a CompactionResult
  row (never a failed summary: the engine falls back to truncation and says so) and
  moves the job `running → succeeded | failed`. It holds no transaction while the
  summariser works.
- `sweep_compactions`: every conversation past its threshold since its last
  compaction gets a job, committed before anything is enqueued.

The compaction is given the conversation's memory: its goal, subtasks, phase, decisions
and error patterns are written into the summary verbatim, and checked before it is
accepted (`retention` and `repaired` on the row). Every structured item of the summary
cites the seqs of its messages; those whose source is unknown are counted in
`unsourced_items` (docs/provenance.md). `ENABLE_AUTO_COMPRESSION=false` turns
off both automatic triggers (the insert trigger and the sweep); `POST …/compact` still
compacts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlmodel import Session

from contextq.catalog import resolve_model
from contextq.history import CompactionOutcome, compact
from contextq.settings import Settings
from contextq.strategy_options import DEFAULT_CONTEXT_THRESHOLD
from service import enqueue, events, jobs
from service.history.stored_memory import load_memory
from service.summarizers import get_summarizer
from service.workspaces.locate import owned_conversation
from store import history_queries as q
from store.db import session_scope
from store.history_tables import Compaction, Conversation
from store.locks import compaction_lock
from store.message_cache import read_messages
from store.tables import utcnow

log = logging.getLogger("contextq.compaction")

COMPACT_JOB_KIND = "compact_conversation"
SWEEP_BATCH = 500
MAX_PAGE = 1000


def compaction_threshold(conversation: Conversation, settings: Settings) -> int:
    """Uncompacted tokens at which the sweep finds a conversation due:
    HISTORY_COMPACTION_MAX_TOKENS, or less when its model's window times its context
    threshold is smaller (in stored counts: for a model whose tokenizer is not
    published, what stays within that share at the largest calibration factor)."""
    limits = resolve_model(conversation.model, settings)
    share = conversation.context_threshold or DEFAULT_CONTEXT_THRESHOLD
    window_share = limits.counting.open_within(int(limits.context_window * share))
    return max(1, min(settings.HISTORY_COMPACTION_MAX_TOKENS, window_share))


def compaction_target(conversation: Conversation, settings: Settings) -> int:
    """Tokens the summary plus the kept tail may use: the configured target, never more
    than half the uncompacted threshold (so a compaction always leaves room to grow)."""
    return max(
        512,
        min(
            settings.HISTORY_COMPACTION_TARGET_TOKENS,
            compaction_threshold(conversation, settings) // 2,
        ),
    )


def crossed_on_append(tokens_before: int, tokens_after: int, settings: Settings) -> bool:
    """An append that takes the uncompacted tokens over HISTORY_COMPACTION_MAX_TOKENS
    triggers a compaction (once: at the crossing), unless ENABLE_AUTO_COMPRESSION is off."""
    if not settings.ENABLE_AUTO_COMPRESSION:
        return False
    return tokens_before < settings.HISTORY_COMPACTION_MAX_TOKENS <= tokens_after


def enqueue_compaction(
    session: Session, *, settings: Settings, owner_id: str, conversation_id: str
) -> str:
    """A queued compaction job in `session`, enqueued once it commits; returns its id."""
    job = q.create_job(session, owner_id=owner_id, kind=COMPACT_JOB_KIND, target_id=conversation_id)
    enqueue.after_commit(
        session,
        enqueue.compact_conversation,
        conversation_id,
        job.id,
        settings=settings,
        on_error=_fail_unsent(job.id),
    )
    return job.id


def _fail_unsent(job_id: str) -> Callable[[Exception], None]:
    """What to do when the job's message could not be sent: the job fails, saying so."""

    def fail(exc: Exception) -> None:
        jobs.fail_job(job_id, f"could not enqueue the compaction (broker unavailable): {exc}")

    return fail


def request_compaction(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> str:
    """`POST …/compact`: the id of a job that compacts the conversation."""
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    return enqueue_compaction(
        session, settings=settings, owner_id=owner_id, conversation_id=conversation_id
    )


def list_compactions(
    *, session: Session, owner_id: str, conversation_id: str, limit: int = 100
) -> list[Compaction]:
    """The conversation's CompactionResults, newest first."""
    owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    return q.list_compactions(
        session, conversation_id=conversation_id, limit=max(1, min(limit, MAX_PAGE))
    )


def run_compaction(
    *, conversation_id: str, job_id: str | None, settings: Settings
) -> dict[str, Any]:
    """Compact one conversation unless another run holds its lock. Never raises for a
    bad summary; unexpected errors mark the job failed and are re-raised for the logs."""
    with compaction_lock(conversation_id, settings=settings) as held:
        if not held:
            log.info("compaction of %s already running; skipped", conversation_id)
            result = {"skipped": "already running"}
            if job_id:
                jobs.succeed_job(job_id, result)
            return result
        if job_id and not jobs.start_job(job_id):
            return {"skipped": "job already finished"}
        try:
            result = _compact(conversation_id, job_id=job_id, settings=settings)
        except Exception as exc:
            log.exception("compaction of %s failed", conversation_id)
            events.compaction_finished(
                settings=settings,
                conversation_id=conversation_id,
                job_id=job_id,
                error=f"{type(exc).__name__}: {exc}",
            )
            if job_id:
                jobs.fail_job(job_id, f"{type(exc).__name__}: {exc}")
            raise
        if job_id:
            jobs.succeed_job(job_id, result)
        events.compaction_finished(
            settings=settings, conversation_id=conversation_id, job_id=job_id, result=result
        )
        return result


def _compact(conversation_id: str, *, job_id: str | None, settings: Settings) -> dict[str, Any]:
    with session_scope(write=False) as session:
        conversation = q.get_conversation_by_id(session, conversation_id=conversation_id)
        if conversation is None:
            return {"skipped": "conversation deleted"}
        previous = q.newest_compaction(session, conversation_id=conversation_id)
        messages = read_messages(
            session,
            conversation_id=conversation_id,
            after_seq=previous.through_seq if previous else 0,
        )
        target = compaction_target(conversation, settings)
        encoding = resolve_model(conversation.model, settings).encoding
        memory = load_memory(
            session, conversation_id=conversation_id, settings=settings, conversation=conversation
        )
    if not messages:
        return {"skipped": "nothing new since the last compaction"}
    outcome = compact(
        messages,
        get_summarizer(settings),
        settings,
        memory=memory,
        previous_summary=previous.summary if previous else None,
        target_tokens=target,
        encoding=encoding,
    )
    if outcome is None:
        return {"skipped": "nothing to compact"}
    row = _compaction_row(
        conversation_id, outcome, job_id=job_id, previous_id=previous.id if previous else None
    )
    with session_scope() as session:
        current = q.get_conversation_by_id(
            session, conversation_id=conversation_id, for_update=True
        )
        if current is None:
            return {"skipped": "conversation deleted"}
        if current.last_compacted_seq >= outcome.through_seq:  # a newer one landed meanwhile
            return {"skipped": "a newer compaction exists"}
        q.add_compaction(session, compaction=row)
    _log_compaction(conversation_id, outcome)
    return {
        "compaction_id": row.id,
        "method": outcome.method,
        "through_seq": outcome.through_seq,
        "original_tokens": outcome.original_tokens,
        "compacted_tokens": outcome.compacted_tokens,
        "fallback_reason": outcome.fallback_reason,
        "retention": outcome.retention,
        "repaired": outcome.repaired,
        "structured_items": outcome.structured_items,
        "unsourced_items": outcome.unsourced_items,
    }


def _log_compaction(conversation_id: str, outcome: CompactionOutcome) -> None:
    """The one log line per compaction (docs/operations.md#running-the-service)."""
    log.info(
        "compacted conversation %s through #%d: %d messages, %d → %d tokens (%s) in %.0fms;"
        " retention %.2f of %d checked items%s; provenance: %d items, %d unsourced",
        conversation_id,
        outcome.through_seq,
        outcome.original_message_count,
        outcome.original_tokens,
        outcome.compacted_tokens,
        outcome.method,
        outcome.duration_ms,
        outcome.retention,
        outcome.checked_items,
        f", repaired: {'; '.join(outcome.repaired)}" if outcome.repaired else "",
        outcome.structured_items,
        outcome.unsourced_items,
    )


def _compaction_row(
    conversation_id: str, outcome: CompactionOutcome, *, job_id: str | None, previous_id: str | None
) -> Compaction:
    return Compaction(
        conversation_id=conversation_id,
        method=outcome.method,
        summary=outcome.summary,
        through_seq=outcome.through_seq,
        original_message_count=outcome.original_message_count,
        compacted_message_count=outcome.compacted_message_count,
        original_tokens=outcome.original_tokens,
        compacted_tokens=outcome.compacted_tokens,
        duration_ms=outcome.duration_ms,
        retention=outcome.retention,
        repaired=list(outcome.repaired),
        unsourced_items=outcome.unsourced_items,
        details={
            "summarizer": outcome.summarizer,
            "summary_tokens": outcome.summary_tokens,
            "summarized_message_count": outcome.summarized_message_count,
            "verbatim_ids": outcome.verbatim_ids,
            "chunks": outcome.chunks,
            "fallback_reason": outcome.fallback_reason,
            "warnings": outcome.warnings,
            "checked_items": outcome.checked_items,
            "structured_items": outcome.structured_items,
            "previous_compaction_id": previous_id,
        },
        job_id=job_id,
    )


def sweep_compactions(*, settings: Settings) -> dict[str, Any]:
    """Enqueue a compaction for every conversation past its threshold since its last one.

    Skips conversations with a compaction job queued or running (younger than the task
    time limit). Jobs are committed before anything is enqueued; a job whose message
    cannot be sent is marked failed (the next sweep tries again). Does nothing when
    ENABLE_AUTO_COMPRESSION is off."""
    if not settings.ENABLE_AUTO_COMPRESSION:
        return {"enqueued": [], "candidates": 0, "disabled": "ENABLE_AUTO_COMPRESSION=false"}
    floor = min(settings.HISTORY_COMPACTION_MAX_TOKENS, 1024)
    recent = utcnow() - timedelta(seconds=settings.TASK_TIME_LIMIT_S + 60)
    pending: list[tuple[str, str]] = []
    with session_scope() as session:
        candidates = q.conversations_grown_since_compaction(
            session, min_tokens=floor, limit=SWEEP_BATCH
        )
        due = [
            c for c in candidates if c.tokens_since_compaction >= compaction_threshold(c, settings)
        ]
        busy = q.unfinished_job_targets(
            session, kind=COMPACT_JOB_KIND, target_ids=[c.id for c in due], since=recent
        )
        for conversation in due:
            if conversation.id not in busy:
                job = q.create_job(
                    session,
                    owner_id=conversation.owner_id,
                    kind=COMPACT_JOB_KIND,
                    target_id=conversation.id,
                )
                pending.append((conversation.id, job.id))
    sent = [
        conversation_id
        for conversation_id, job_id in pending
        if enqueue.now_or_log(
            enqueue.compact_conversation,
            conversation_id,
            job_id,
            settings=settings,
            on_error=_fail_unsent(job_id),
        )
    ]
    if pending:
        log.info("compaction sweep enqueued %d of %d conversation(s)", len(sent), len(pending))
    return {"enqueued": sent, "candidates": len(candidates)}
