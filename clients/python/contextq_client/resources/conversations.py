"""`client.conversations`: create, list, read, change and delete conversations; start
and list their compactions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contextq_client import models as m
from contextq_client.routing import body, params, route, seg
from contextq_client.transport import Resource, SyncTransport


class Conversations(Resource[SyncTransport]):
    @route("POST", "/v1/conversations")
    def create(self, **fields: Any) -> m.Conversation:
        """A conversation; `fields` as in the API (`title`, `model`, `system_prompt`,
        `tools`, `context_strategy`, `project_id`, `reminders`, …)."""
        response = self._t.request("POST", "/v1/conversations", json=body(**fields))
        return m.Conversation.model_validate(response.json())

    @route("GET", "/v1/conversations")
    def list(
        self, *, limit: int | None = None, cursor: str | None = None
    ) -> m.Page[m.Conversation]:
        """The key owner's conversations, newest first."""
        response = self._t.request(
            "GET", "/v1/conversations", params=params(limit=limit, cursor=cursor)
        )
        return m.Page[m.Conversation].model_validate(response.json())

    def iter(self, *, page_size: int = 100) -> Iterator[m.Conversation]:
        """Every conversation (newest first), page after page."""
        cursor: str | None = None
        while True:
            page = self.list(limit=page_size, cursor=cursor)
            yield from page.data
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    @route("GET", "/v1/conversations/{conversation_id}")
    def get(self, conversation_id: str) -> m.Conversation:
        response = self._t.request("GET", f"/v1/conversations/{seg(conversation_id)}")
        return m.Conversation.model_validate(response.json())

    @route("PATCH", "/v1/conversations/{conversation_id}")
    def update(self, conversation_id: str, **fields: Any) -> m.Conversation:
        """Change the fields given (pass None to clear one)."""
        path = f"/v1/conversations/{seg(conversation_id)}"
        response = self._t.request("PATCH", path, json=fields)
        return m.Conversation.model_validate(response.json())

    @route("DELETE", "/v1/conversations/{conversation_id}")
    def delete(self, conversation_id: str) -> None:
        self._t.request("DELETE", f"/v1/conversations/{seg(conversation_id)}")

    @route("POST", "/v1/conversations/{conversation_id}/compact")
    def compact(self, conversation_id: str) -> m.JobAccepted:
        """Start a compaction now; follow it with `client.jobs.wait(job_id)`."""
        path = f"/v1/conversations/{seg(conversation_id)}/compact"
        return m.JobAccepted.model_validate(self._t.request_json("POST", path))

    @route("GET", "/v1/conversations/{conversation_id}/compactions")
    def compactions(
        self, conversation_id: str, *, limit: int | None = None
    ) -> m.Page[m.Compaction]:
        path = f"/v1/conversations/{seg(conversation_id)}/compactions"
        response = self._t.request("GET", path, params=params(limit=limit))
        return m.Page[m.Compaction].model_validate(response.json())
