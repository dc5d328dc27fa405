"""Routes: jobs (background work the API reports on, e.g. compactions)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException

from api.deps import OwnerDep, ReadSessionDep
from api.history_schemas import JobPublic
from store import history_queries as q

router = APIRouter(tags=["jobs"])


@router.get("/jobs/{job_id}", response_model=JobPublic)
def get_job(job_id: str, owner_id: OwnerDep, session: ReadSessionDep) -> JobPublic:
    """`{"id", "kind", "status": "queued|running|succeeded|failed", "result", "error", …}`."""
    job = q.get_job(session, owner_id=owner_id, job_id=job_id)
    if job is None:
        raise HTTPException(404, "job not found")
    return JobPublic.model_validate(job, from_attributes=True)
