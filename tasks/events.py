"""Tasks over events: a webhook delivery attempt and the beat sweep, each a few lines over
`service` (`service.webhook_delivery`, `service.events`)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from contextq.settings import get_settings
from service import events, webhook_delivery
from worker import names


@shared_task(name=names.DELIVER_WEBHOOK, ignore_result=True, acks_late=True)
def deliver_webhook(delivery_id: str) -> None:
    """One attempt of a delivery (its retries are scheduled by the attempt itself)."""
    webhook_delivery.attempt_delivery(settings=get_settings(), delivery_id=delivery_id)


@shared_task(name=names.SWEEP_EVENTS)
def sweep_events() -> dict[str, Any]:
    """The events sweep (beat, every EVENTS_SWEEP_INTERVAL_S)."""
    return events.sweep_events(settings=get_settings())
