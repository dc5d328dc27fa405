"""Sending a webhook delivery (docs/events.md): one attempt per task, signed per Standard
Webhooks, every attempt recorded, retried after WEBHOOK_RETRY_DELAYS_S.

An attempt claims its delivery (`pending → sending`, a conditional update, so a
duplicate message sends nothing), checks the URL again after resolving its host
(`service.webhook_urls`) and connects to the address it checked, sends the body with
`webhook-id` (the delivery id, the same on every attempt), `webhook-timestamp` and
`webhook-signature` (`v1,` HMAC-SHA256, signed by the `standardwebhooks` library), and
follows no redirect. A 2xx answer is success; anything else waits for the next delay,
and after the last one the delivery is `failed`. A short delay is a Celery countdown;
a delay the broker could not hold safely (over half the visibility timeout) and any
lost message are picked up by the events sweep (`send_due`).
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

import httpx
from standardwebhooks.webhooks import Webhook as Signer

from contextq import __version__
from contextq.errors import ValidationFailed
from contextq.settings import Settings
from service import enqueue, webhook_urls
from store import events_queries as q
from store.db import session_scope
from store.event_tables import DeliveryStatus
from store.tables import utcnow

log = logging.getLogger("contextq.webhooks")

DUE_SLACK_S = 1.0  # a message may arrive this much before the attempt is due
SWEEP_GRACE_S = 5.0  # the sweep leaves a just-due delivery to its own countdown message
SWEEP_BATCH = 500
ERROR_CHARS = 300


def attempt_delivery(*, settings: Settings, delivery_id: str) -> str:
    """One attempt; returns its outcome (`succeeded`, `pending`, `failed`, or `skipped`
    when the delivery was not due, taken by another attempt, finished or deleted)."""
    now = utcnow()
    with session_scope() as session:
        claimed = q.claim_delivery(
            session,
            delivery_id=delivery_id,
            now=now,
            due_by=now + timedelta(seconds=DUE_SLACK_S),
        )
        job = q.delivery_job(session, delivery_id=delivery_id) if claimed else None
    if job is None:
        return "skipped"
    attempt = job.attempts + 1
    started, clock = utcnow(), time.perf_counter()
    status_code, error = send(job, settings=settings)
    duration_ms = round((time.perf_counter() - clock) * 1000, 3)
    status, delay = _next_step(status_code, error, attempt, settings)
    finished = utcnow()
    with session_scope() as session:
        moved = q.finish_attempt(
            session,
            delivery_id=delivery_id,
            attempt=attempt,
            started_at=started,
            duration_ms=duration_ms,
            status_code=status_code,
            error=error,
            status=status,
            next_attempt_at=finished + timedelta(seconds=delay) if delay is not None else None,
            now=finished,
        )
    log.info(
        "webhook delivery %s attempt %d: %s (%s) in %.0fms",
        delivery_id,
        attempt,
        status,
        error or status_code,
        duration_ms,
    )
    if moved and delay is not None and delay <= settings.broker_visibility_timeout_s / 2:
        enqueue.now_or_log(enqueue.deliver_webhook, delivery_id, settings=settings, countdown=delay)
    return status


def _next_step(
    status_code: int | None, error: str | None, attempt: int, settings: Settings
) -> tuple[str, float | None]:
    """(status, seconds until the next attempt or None)."""
    if error is None and status_code is not None and 200 <= status_code < 300:
        return DeliveryStatus.SUCCEEDED, None
    delays = settings.webhook_retry_delays_s
    if attempt <= len(delays):
        return DeliveryStatus.PENDING, delays[attempt - 1]
    return DeliveryStatus.FAILED, None


def send(job: q.DeliveryJob, *, settings: Settings) -> tuple[int | None, str | None]:
    """POST the delivery; (HTTP status or None, error or None)."""
    try:
        target = webhook_urls.check(job.url, allowed_hosts=settings.webhook_allowed_hosts)
    except ValidationFailed as exc:
        return None, f"refused: {exc}"[:ERROR_CHARS]
    timestamp = utcnow()
    headers = signed_headers(job.id, job.secret, job.body, timestamp)
    headers["host"] = target.host_header
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    try:
        with httpx.Client(
            timeout=settings.WEBHOOK_TIMEOUT_S, follow_redirects=False, trust_env=False
        ) as client:
            response = client.post(
                target.url_for(target.addresses[0]),
                content=job.body.encode(),
                headers=headers,
                extensions=extensions,
            )
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
    code = response.status_code
    if 300 <= code < 400:
        where = response.headers.get("location", "?")
        return code, f"HTTP {code}: redirect to {where} not followed"[:ERROR_CHARS]
    if not 200 <= code < 300:
        return code, f"HTTP {code}: {response.text[:200]}"[:ERROR_CHARS]
    return code, None


def signed_headers(msg_id: str, secret: str, body: str, timestamp: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt."""
    return {
        "content-type": "application/json",
        "user-agent": f"contextq-webhooks/{__version__}",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": Signer(secret).sign(msg_id, timestamp, body),
    }


def send_due(*, settings: Settings) -> int:
    """The sweep's part: deliveries whose attempt is due (a long delay, a lost message)
    are enqueued; attempts whose worker died mid-send are released first."""
    now = utcnow()
    stale = now - timedelta(seconds=settings.WEBHOOK_TIMEOUT_S + settings.TASK_TIME_LIMIT_S)
    with session_scope() as session:
        released = q.release_stale_sending(session, claimed_before=stale, now=now)
        due = q.due_deliveries(
            session, now=now - timedelta(seconds=SWEEP_GRACE_S), limit=SWEEP_BATCH
        )
    if released:
        log.warning("webhook sweep: %d attempt(s) abandoned mid-send, due again", released)
    sent = sum(
        enqueue.now_or_log(enqueue.deliver_webhook, delivery_id, settings=settings)
        for delivery_id in due
    )
    return sent
