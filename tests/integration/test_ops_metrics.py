"""GET /metrics and /healthz against the real parts: uploads through a real API process
and a real `celery worker`, whose pool child counts into the multiprocess files the API
merges; queue depth from the real broker; worker liveness from its heartbeats.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.files import upload, wait_file_done
from tests.support.procs import wait_until

pytestmark = pytest.mark.integration


def scrape(base_url: str, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    resp = httpx.get(f"{base_url}/metrics", headers=headers, timeout=10)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(resp.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_after_real_uploads_through_a_real_worker(
    stack: Any, worker: Any, api_server: Any, client: Any
) -> None:
    ids = [upload(client, f"m{i}.txt", f"metrics file {i}\n".encode())["id"] for i in range(3)]
    for file_id in ids:
        assert wait_file_done(client, file_id)["status"] == "ready"
    bad = client.get("/v1/files/nope")
    assert bad.status_code == 404

    # the task's duration is observed after the row is written: wait for the pool child
    def counted() -> dict[Any, float] | None:
        s = scrape(api_server.base_url)
        n = value(
            s,
            "contextq_task_duration_seconds_count",
            task="contextq.process_file",
            state="SUCCESS",
        )
        return s if n == 3 else None

    s = wait_until(counted, timeout=15, interval=0.2, what="3 process_file durations")
    http = "contextq_http_request_duration_seconds_count"
    assert value(s, http, method="POST", route="/v1/files", status="202") == 3
    assert value(s, http, method="GET", route="/v1/files/{file_id}", status="404") == 1
    # raw paths never become labels
    assert not any("nope" in str(labels) for _name, labels in s)
    assert value(s, "contextq_files", status="ready") == 3
    assert value(s, "contextq_files", status="failed") == 0
    assert value(s, "contextq_queue_depth", queue="files") == 0
    assert value(s, "contextq_live_workers") >= 1
    assert value(s, "contextq_scrape_errors", source="database") == 0
    assert value(s, "contextq_scrape_errors", source="broker") == 0

    # with the worker gone, uploads wait in the queue and the scrape shows them
    worker.stop()
    for i in range(2):
        upload(client, f"q{i}.txt", b"queued\n")
    s = scrape(api_server.base_url)
    assert value(s, "contextq_queue_depth", queue="files") == 2
    assert value(s, "contextq_files", status="uploaded") == 2


def test_context_builds_and_compactions_are_counted(
    stack: Any, worker: Any, api_server: Any, client: Any
) -> None:
    cid = client.post("/v1/conversations", json={"system_prompt": "be brief"}).json()["id"]
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "word " * 40}
        for i in range(30)
    ]
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text
    for fmt in ("openai", "anthropic"):
        assert client.get(f"/v1/conversations/{cid}/context", params={"format": fmt}).is_success
    job = client.post(f"/v1/conversations/{cid}/compact").json()["job_id"]
    wait_until(
        lambda: client.get(f"/v1/jobs/{job}").json()["status"] in ("succeeded", "failed"),
        timeout=60,
        what="the compaction job",
    )

    def compacted() -> dict[Any, float] | None:
        s = scrape(api_server.base_url)
        total = sum(v for (n, _l), v in s.items() if n == "contextq_compactions_total")
        return s if total == 1 else None

    s = wait_until(compacted, timeout=15, interval=0.2, what="one compaction counted")
    build = "contextq_context_build_duration_seconds_count"
    built = {dict(labels)["format"]: v for (name, labels), v in s.items() if name == build and v}
    assert built == {"openai": 1, "anthropic": 1}
    outcomes = {labels: v for (n, labels), v in s.items() if n == "contextq_compactions_total"}
    (labels,) = [dict(lab) for lab, v in outcomes.items() if v == 1]
    assert labels["outcome"] in ("compacted", "skipped")
    if labels["outcome"] == "compacted":
        assert labels["method"] in ("summary", "truncation")


def test_metrics_access_from_elsewhere_needs_the_token(stack: Any, api_server: Any) -> None:
    base = api_server.base_url
    # through a proxy: not loopback, and no METRICS_TOKEN is configured → always 403
    for header in ({"X-Forwarded-For": "203.0.113.7"}, {"Forwarded": "for=203.0.113.7"}):
        resp = httpx.get(f"{base}/metrics", headers=header, timeout=10)
        assert resp.status_code == 403, resp.text
        assert "METRICS_TOKEN" in resp.json()["detail"]
    # health and metrics need no API key and are never rate limited
    assert httpx.get(f"{base}/metrics", timeout=10).status_code == 200


@pytest.mark.stack_env(METRICS_TOKEN="s3cret-metrics-token-0123")
def test_metrics_token_from_elsewhere(stack: Any, app_client: Any) -> None:
    # the in-process client's address ("testclient") is not loopback
    app_client.headers.pop("Authorization", None)
    no_auth = app_client.get("/metrics")
    assert no_auth.status_code == 401
    assert no_auth.headers["www-authenticate"] == "Bearer"
    wrong = app_client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403
    ok = app_client.get("/metrics", headers={"Authorization": "Bearer s3cret-metrics-token-0123"})
    assert ok.status_code == 200
    assert "contextq_files" in ok.text


@pytest.mark.stack_env(HEALTH_WORKER_GRACE_S="2")
def test_healthz_reports_live_workers_and_503_after_the_grace(
    stack: Any, worker_factory: Any, api_server: Any
) -> None:
    def health() -> tuple[int, dict[str, Any]]:
        resp = httpx.get(f"{api_server.base_url}/healthz", timeout=10)
        return resp.status_code, resp.json()

    w = worker_factory()
    status, body = wait_until(lambda: (h := health())[1]["live_workers"] and h, timeout=15)
    assert (status, body["workers"], body["live_workers"]) == (200, "ok", 1)
    worker_factory()  # a second one
    wait_until(lambda: health()[1]["live_workers"] == 2, timeout=15, what="two live workers")

    w.stop()  # a clean shutdown leaves the broker's view at once
    assert wait_until(lambda: health()[1]["live_workers"] == 1, timeout=10)


@pytest.mark.stack_env(HEALTH_WORKER_GRACE_S="2")
def test_healthz_503_when_no_worker_for_longer_than_the_grace(stack: Any, api_server: Any) -> None:
    time.sleep(2.5)  # the API process started more than the grace period ago; no worker
    resp = httpx.get(f"{api_server.base_url}/healthz", timeout=10)
    assert resp.status_code == 503
    assert resp.json()["workers"] == "unavailable"
    assert resp.json()["live_workers"] == 0
