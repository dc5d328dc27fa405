"""`client.settings`: the owner's settings (their system prompt)."""

from __future__ import annotations

from contextq_client import models as m
from contextq_client.routing import route
from contextq_client.transport import Resource, SyncTransport


class OwnerSettingsResource(Resource[SyncTransport]):
    @route("GET", "/v1/settings")
    def get(self) -> m.OwnerSettings:
        return m.OwnerSettings.model_validate(self._t.request_json("GET", "/v1/settings"))

    @route("PUT", "/v1/settings")
    def update(self, *, system_prompt: str | None) -> m.OwnerSettings:
        """Save the owner's system prompt (None: back to the packaged default)."""
        payload = {"system_prompt": system_prompt}
        response = self._t.request("PUT", "/v1/settings", json=payload)
        return m.OwnerSettings.model_validate(response.json())
