"""`client.jobs`: background jobs (compactions), read or waited for."""

from __future__ import annotations

import time

from contextq_client import models as m
from contextq_client.routing import route, seg
from contextq_client.transport import Resource, SyncTransport


class Jobs(Resource[SyncTransport]):
    @route("GET", "/v1/jobs/{job_id}")
    def get(self, job_id: str) -> m.Job:
        return m.Job.model_validate(self._t.request_json("GET", f"/v1/jobs/{seg(job_id)}"))

    def wait(self, job_id: str, *, timeout: float = 300.0, interval: float = 0.25) -> m.Job:
        """The job once `succeeded` or `failed` (polled); after `timeout`, as it is."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.get(job_id)
            if job.done or time.monotonic() >= deadline:
                return job
            time.sleep(interval)
