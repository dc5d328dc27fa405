"""Jobs: background work the API reports on (`GET /v1/jobs/{id}`; docs/history.md#compaction).

A job's progress lives in its row (`queued → running → succeeded | failed`), never in
the Celery result backend. The transitions below open their own short transactions:
they are called from long-running work and from after-commit hooks.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from contextq.errors import NotFound
from store import history_queries as q
from store.db import session_scope
from store.tables import Job, JobStatus


def get_job(*, session: Session, owner_id: str, job_id: str) -> Job:
    job = q.get_job(session, owner_id=owner_id, job_id=job_id)
    if job is None:
        raise NotFound("job not found")
    return job


def start_job(job_id: str) -> bool:
    """queued → running; False when the job already finished (a redelivered message)."""
    with session_scope() as session:
        return q.start_job(session, job_id=job_id)


def succeed_job(job_id: str, result: dict[str, Any]) -> None:
    with session_scope() as session:
        q.finish_job(session, job_id=job_id, status=JobStatus.SUCCEEDED, result=result)


def fail_job(job_id: str, error: str) -> None:
    with session_scope() as session:
        q.finish_job(session, job_id=job_id, status=JobStatus.FAILED, error=error)
