"""Compaction as plain functions over sessions (the Celery tasks in `tasks/history.py`
are a few lines over these; tests can call them directly).

`run_compaction(conversation_id, job_id)`: the caller holds the conversation's lock.
It re-reads the rows, compacts the messages after the newest compaction (folding
that compaction's summary into the new one, so each run works on a bounded batch),
stores a CompactionResult row (never a failed summary: the engine falls back to
truncation and says so) and moves the job `running → succeeded | failed`.

`sweep(enqueue)`: conversations that grew past their threshold since their last
compaction get a job and an enqueued `compact_conversation` (after the commit).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from contextq.catalog import resolve_model
from contextq.history import compact, get_summarizer
from contextq.history.strategies import DEFAULT_CONTEXT_THRESHOLD
from contextq.settings import Settings
from store import history_queries as q
from store.db import session_scope
from store.history_tables import Compaction, Conversation
from store.tables import Job, JobStatus, utcnow

log = logging.getLogger("contextq.compaction")

SWEEP_BATCH = 500


def skip_job(job_id: str | None, *, reason: str) -> dict[str, Any]:
    """A trigger that does nothing (another run holds the lock): its job succeeds, saying so."""
    result = {"skipped": reason}
    if job_id:
        with session_scope() as session:
            q.finish_job(session, job_id=job_id, status=JobStatus.SUCCEEDED, result=result)
    return result


def fail_job(job_id: str | None, *, error: str) -> None:
    if job_id:
        with session_scope() as session:
            q.finish_job(session, job_id=job_id, status=JobStatus.FAILED, error=error)


def compaction_threshold(conversation: Conversation, settings: Settings) -> int:
    """Uncompacted tokens at which a conversation is due: HISTORY_COMPACTION_MAX_TOKENS,
    or less when its model's window times its context threshold is smaller."""
    limits = resolve_model(conversation.model, settings)
    share = conversation.context_threshold or DEFAULT_CONTEXT_THRESHOLD
    return max(1, min(settings.HISTORY_COMPACTION_MAX_TOKENS, int(limits.context_window * share)))


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


def run_compaction(
    conversation_id: str, *, job_id: str | None, settings: Settings
) -> dict[str, Any]:
    """Compact one conversation (the caller holds its lock). Never raises for a bad
    summary; unexpected errors mark the job failed and are re-raised for the logs."""
    if job_id:
        with session_scope() as session:
            if not q.start_job(session, job_id=job_id):
                return {"skipped": "job already finished"}
    try:
        result = _compact(conversation_id, job_id=job_id, settings=settings)
    except Exception as exc:
        log.exception("compaction of %s failed", conversation_id)
        fail_job(job_id, error=f"{type(exc).__name__}: {exc}")
        raise
    if job_id:
        with session_scope() as session:
            q.finish_job(session, job_id=job_id, status=JobStatus.SUCCEEDED, result=result)
    return result


def _compact(conversation_id: str, *, job_id: str | None, settings: Settings) -> dict[str, Any]:
    with session_scope(write=False) as session:
        conversation = q.get_conversation_any_owner(session, conversation_id=conversation_id)
        if conversation is None:
            return {"skipped": "conversation deleted"}
        previous = q.newest_compaction(session, conversation_id=conversation_id)
        after = previous.through_seq if previous else 0
        messages = q.all_engine_messages(
            session, conversation_id=conversation_id, after_seq=after, through_seq=None
        )
        target = compaction_target(conversation, settings)
        encoding = resolve_model(conversation.model, settings).encoding
    if not messages:
        return {"skipped": "nothing new since the last compaction"}
    outcome = compact(
        messages,
        get_summarizer(settings),
        settings,
        previous_summary=previous.summary if previous else None,
        target_tokens=target,
        encoding=encoding,
    )
    if outcome is None:
        return {"skipped": "nothing to compact"}
    details = {
        "summarizer": outcome.summarizer,
        "summary_tokens": outcome.summary_tokens,
        "summarized_message_count": outcome.summarized_message_count,
        "verbatim_ids": outcome.verbatim_ids,
        "chunks": outcome.chunks,
        "fallback_reason": outcome.fallback_reason,
        "warnings": outcome.warnings,
        "previous_compaction_id": previous.id if previous else None,
    }
    row = Compaction(
        conversation_id=conversation_id,
        method=outcome.method,
        summary=outcome.summary,
        through_seq=outcome.through_seq,
        original_message_count=outcome.original_message_count,
        compacted_message_count=outcome.compacted_message_count,
        original_tokens=outcome.original_tokens,
        compacted_tokens=outcome.compacted_tokens,
        duration_ms=outcome.duration_ms,
        details=details,
        job_id=job_id,
    )
    with session_scope() as session:
        current = q.get_conversation_any_owner(
            session, conversation_id=conversation_id, for_update=True
        )
        if current is None:
            return {"skipped": "conversation deleted"}
        if current.last_compacted_seq >= outcome.through_seq:  # a newer one landed meanwhile
            return {"skipped": "a newer compaction exists"}
        q.add_compaction(session, compaction=row)
    log.info(
        "compacted conversation %s through #%d: %d messages, %d → %d tokens (%s) in %.0fms",
        conversation_id,
        outcome.through_seq,
        outcome.original_message_count,
        outcome.original_tokens,
        outcome.compacted_tokens,
        outcome.method,
        outcome.duration_ms,
    )
    return {
        "compaction_id": row.id,
        "method": outcome.method,
        "through_seq": outcome.through_seq,
        "original_tokens": outcome.original_tokens,
        "compacted_tokens": outcome.compacted_tokens,
        "fallback_reason": outcome.fallback_reason,
    }


def sweep(*, settings: Settings, enqueue: Callable[[str, str], object]) -> dict[str, Any]:
    """Enqueue a compaction for every conversation past its threshold since its last one.

    Skips conversations with a compaction job queued or running (younger than the task
    time limit). Jobs are committed before anything is enqueued.
    """
    floor = min(settings.HISTORY_COMPACTION_MAX_TOKENS, 1024)
    pending: list[tuple[str, str]] = []
    recent = utcnow() - timedelta(seconds=settings.TASK_TIME_LIMIT_S + 60)
    with session_scope() as session:
        candidates = q.conversations_due_for_compaction(
            session, min_tokens=floor, limit=SWEEP_BATCH
        )
        due = [
            c for c in candidates if c.tokens_since_compaction >= compaction_threshold(c, settings)
        ]
        busy = set()
        if due:
            busy = set(
                session.execute(
                    select(Job.target_id).where(  # type: ignore[call-overload]
                        Job.kind == q.COMPACT_JOB_KIND,
                        Job.target_id.in_([c.id for c in due]),  # type: ignore[union-attr]
                        Job.status.in_([JobStatus.QUEUED, JobStatus.RUNNING]),  # type: ignore[attr-defined]
                        Job.created_at >= recent,
                    )
                ).scalars()
            )
        for conversation in due:
            if conversation.id in busy:
                continue
            job = q.create_job(
                session,
                owner_id=conversation.owner_id,
                kind=q.COMPACT_JOB_KIND,
                target_id=conversation.id,
            )
            pending.append((conversation.id, job.id))
    for conversation_id, job_id in pending:
        enqueue(conversation_id, job_id)
    if pending:
        log.info("compaction sweep enqueued %d conversation(s)", len(pending))
    return {"enqueued": [c for c, _ in pending], "candidates": len(candidates)}
