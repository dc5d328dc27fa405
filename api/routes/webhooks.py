"""Routes: webhooks and their deliveries (docs/events.md). Adapters over `service.webhooks`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from api.deps import OwnerDep, SettingsDep, read, write
from api.schemas.events import (
    DeliveryList,
    DeliveryPublic,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookPublic,
)
from service import webhooks

router = APIRouter(tags=["webhooks"])


@router.post(
    "/webhooks",
    status_code=201,
    response_model=WebhookCreated,
    responses={
        409: {"description": "too many webhooks"},
        422: {"description": "bad events or secret, or a URL that may not be reached"},
    },
)
async def create_webhook(
    body: WebhookCreate, owner_id: OwnerDep, settings: SettingsDep
) -> WebhookCreated:
    """Subscribe a URL to event types. The answer holds the signing secret, once."""
    row = await write(
        webhooks.create_webhook,
        settings=settings,
        owner_id=owner_id,
        url=body.url,
        events=body.events,
        secret=body.secret,
    )
    return WebhookCreated.model_validate(row)


@router.get("/webhooks", response_model=WebhookList)
async def list_webhooks(owner_id: OwnerDep) -> WebhookList:
    rows = await read(webhooks.list_webhooks, owner_id=owner_id)
    return WebhookList(data=[WebhookPublic.model_validate(r) for r in rows])


@router.get("/webhooks/{webhook_id}", response_model=WebhookPublic)
async def get_webhook(webhook_id: str, owner_id: OwnerDep) -> WebhookPublic:
    row = await read(webhooks.get_webhook, owner_id=owner_id, webhook_id=webhook_id)
    return WebhookPublic.model_validate(row)


@router.delete("/webhooks/{webhook_id}", status_code=204)
async def delete_webhook(webhook_id: str, owner_id: OwnerDep) -> Response:
    await write(webhooks.delete_webhook, owner_id=owner_id, webhook_id=webhook_id)
    return Response(status_code=204)


@router.get("/webhooks/{webhook_id}/deliveries", response_model=DeliveryList)
async def list_deliveries(
    webhook_id: str,
    owner_id: OwnerDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> DeliveryList:
    """Newest first, each with its attempts. Pass `next_cursor` back as `cursor`."""
    page = await read(
        webhooks.list_deliveries,
        owner_id=owner_id,
        webhook_id=webhook_id,
        limit=limit,
        cursor=cursor,
    )
    return DeliveryList(
        data=[
            DeliveryPublic.model_validate(
                {
                    **d.model_dump(),
                    "event_id": d.event_seq,
                    "attempts": [a.model_dump() for a in page.attempts[d.id]],
                }
            )
            for d in page.deliveries
        ],
        next_cursor=page.next_cursor,
    )
