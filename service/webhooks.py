"""Webhooks (docs/events.md): create (the secret shown once), list, get, delete, and the
deliveries of one with each attempt.

The URL is checked (`service.webhook_urls`: public addresses only, unless the host is
in WEBHOOK_ALLOWED_HOSTS) before the session is first used, so resolving its host never
holds a database lock. Secrets are Standard Webhooks secrets: `whsec_` and the base64
of 24 to 64 random bytes (generated when none is given).
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from contextq.errors import Conflict, NotFound, ValidationFailed
from contextq.settings import Settings
from service import webhook_urls
from service.events import EVENT_TYPES
from store import events_queries as q
from store.event_tables import Webhook, WebhookAttempt, WebhookDelivery
from store.files_queries import aware

MAX_WEBHOOKS_PER_OWNER = 50
SECRET_PREFIX = "whsec_"  # noqa: S105 - the Standard Webhooks prefix, not a secret
SECRET_BYTES = 32
MAX_PAGE = 200


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def checked_secret(secret: str | None) -> str:
    """The given secret if it is a Standard Webhooks secret, a new one if None."""
    if secret is None:
        return new_secret()
    raw = secret.removeprefix(SECRET_PREFIX)
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        decoded = b""
    if not secret.startswith(SECRET_PREFIX) or not 24 <= len(decoded) <= 64:
        raise ValidationFailed(
            "secret must be `whsec_` followed by the base64 of 24 to 64 random bytes "
            "(or leave it out and one is generated)",
            field="secret",
        )
    return secret


def checked_events(events: Sequence[str]) -> list[str]:
    wanted = list(dict.fromkeys(events))
    unknown = [e for e in wanted if e not in EVENT_TYPES]
    if not wanted or unknown:
        raise ValidationFailed(
            f"events must name at least one of {', '.join(EVENT_TYPES)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else ""),
            field="events",
        )
    return wanted


def create_webhook(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    url: str,
    events: Sequence[str],
    secret: str | None = None,
) -> Webhook:
    """A new webhook; its `secret` is the one time the caller sees it."""
    wanted = checked_events(events)
    key = checked_secret(secret)
    target = webhook_urls.check(url, allowed_hosts=settings.webhook_allowed_hosts)
    if q.count_webhooks(session, owner_id=owner_id) >= MAX_WEBHOOKS_PER_OWNER:
        raise Conflict(f"an owner has at most {MAX_WEBHOOKS_PER_OWNER} webhooks; delete one first")
    row = Webhook(owner_id=owner_id, url=target.url, events=wanted, secret=key)
    session.add(row)
    session.flush()
    return row


def list_webhooks(*, session: Session, owner_id: str) -> list[Webhook]:
    return q.list_webhooks(session, owner_id=owner_id)


def get_webhook(*, session: Session, owner_id: str, webhook_id: str) -> Webhook:
    row = q.get_webhook(session, owner_id=owner_id, webhook_id=webhook_id)
    if row is None:
        raise NotFound(f"webhook {webhook_id} not found")
    return row


def delete_webhook(*, session: Session, owner_id: str, webhook_id: str) -> None:
    """Deletes it with its deliveries (an attempt under way finds it gone and stops)."""
    get_webhook(session=session, owner_id=owner_id, webhook_id=webhook_id)
    q.delete_webhook(session, webhook_id=webhook_id)


@dataclass(frozen=True)
class DeliveryPage:
    deliveries: list[WebhookDelivery]
    attempts: dict[str, list[WebhookAttempt]]
    next_cursor: str | None


def list_deliveries(
    *,
    session: Session,
    owner_id: str,
    webhook_id: str,
    limit: int = 50,
    cursor: str | None = None,
) -> DeliveryPage:
    """The webhook's deliveries, newest first, each with its attempts in order."""
    get_webhook(session=session, owner_id=owner_id, webhook_id=webhook_id)
    limit = max(1, min(limit, MAX_PAGE))
    rows = q.list_deliveries(
        session, webhook_id=webhook_id, limit=limit + 1, before=_decode(cursor)
    )
    page = rows[:limit]
    attempts: dict[str, list[WebhookAttempt]] = {d.id: [] for d in page}
    for attempt in q.attempts_of(session, delivery_ids=list(attempts)):
        attempts[attempt.delivery_id].append(attempt)
    next_cursor = _encode(page[-1]) if len(rows) > limit else None
    return DeliveryPage(page, attempts, next_cursor)


def _encode(row: WebhookDelivery) -> str:
    created = aware(row.created_at) or row.created_at
    raw = f"{created.isoformat()}|{row.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(cursor: str | None) -> tuple[datetime, str] | None:
    if not cursor:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, row_id = raw.split("|", 1)
        return datetime.fromisoformat(created), row_id
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise ValidationFailed("cursor is not one this API gave", field="cursor") from None
