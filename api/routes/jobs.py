"""Routes: jobs (background work the API reports on, e.g. compactions)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from api.deps import OwnerDep, read
from api.responses import json_response
from api.schemas.history import JobPublic
from service import jobs

router = APIRouter(tags=["jobs"])


@router.get("/jobs/{job_id}", response_model=JobPublic)
async def get_job(job_id: str, owner_id: OwnerDep) -> Response:
    """`{"id", "kind", "status": "queued|running|succeeded|failed", "result", "error", …}`."""
    row = await read(jobs.get_job, owner_id=owner_id, job_id=job_id)
    return json_response(JobPublic.model_validate(row))
