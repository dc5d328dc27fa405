"""`client.webhooks`: webhooks and their deliveries."""

from __future__ import annotations

from collections.abc import Iterator

from contextq_client import models as m
from contextq_client.routing import body, params, route, seg
from contextq_client.transport import Resource, SyncTransport


class Webhooks(Resource[SyncTransport]):
    @route("POST", "/v1/webhooks")
    def create(self, url: str, events: list[str], *, secret: str | None = None) -> m.WebhookCreated:
        """Register a webhook; the answer's `secret` is shown once."""
        payload = body(url=url, events=events, secret=secret)
        response = self._t.request("POST", "/v1/webhooks", json=payload)
        return m.WebhookCreated.model_validate(response.json())

    @route("GET", "/v1/webhooks")
    def list(self) -> m.WebhookList:
        return m.WebhookList.model_validate(self._t.request_json("GET", "/v1/webhooks"))

    @route("GET", "/v1/webhooks/{webhook_id}")
    def get(self, webhook_id: str) -> m.Webhook:
        response = self._t.request("GET", f"/v1/webhooks/{seg(webhook_id)}")
        return m.Webhook.model_validate(response.json())

    @route("DELETE", "/v1/webhooks/{webhook_id}")
    def delete(self, webhook_id: str) -> None:
        self._t.request("DELETE", f"/v1/webhooks/{seg(webhook_id)}")

    @route("GET", "/v1/webhooks/{webhook_id}/deliveries")
    def deliveries(
        self, webhook_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> m.Page[m.Delivery]:
        path = f"/v1/webhooks/{seg(webhook_id)}/deliveries"
        response = self._t.request("GET", path, params=params(limit=limit, cursor=cursor))
        return m.Page[m.Delivery].model_validate(response.json())

    def iter_deliveries(self, webhook_id: str, *, page_size: int = 100) -> Iterator[m.Delivery]:
        """Every delivery of the webhook, page after page."""
        cursor: str | None = None
        while True:
            page = self.deliveries(webhook_id, limit=page_size, cursor=cursor)
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return
