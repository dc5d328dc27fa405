"""`client.files`: uploads (two-phase: 202, then processing in the worker), their
status by long poll, their processed content."""

from __future__ import annotations

import time
from collections.abc import Iterator

from contextq_client import models as m
from contextq_client.payload import FileInput, multipart_body
from contextq_client.routing import body, params, route, seg
from contextq_client.transport import Resource, SyncTransport

MAX_WAIT_PER_POLL_S = 30.0  # the API's long-poll limit


class Files(Resource[SyncTransport]):
    """Uploads (two-phase: 202 then processing in the worker) and their results."""

    @route("POST", "/v1/files")
    def upload(
        self,
        file: FileInput,
        *,
        filename: str | None = None,
        conversation_id: str | None = None,
        project_id: str | None = None,
        wait: bool = False,
        timeout: float = 900.0,
    ) -> m.File:
        """Upload a path, bytes or a binary file object (a path or a seekable file is
        streamed, never read whole into memory). With `wait=True`, long-poll until the file
        is `ready` or `failed` (or `timeout` seconds pass: then its current state)."""
        form = body(conversation_id=conversation_id, project_id=project_id)
        sent = multipart_body(file, filename=filename, fields=form)
        response = self._t.request("POST", "/v1/files", **sent)
        uploaded = m.File.model_validate(response.json())
        if not wait or uploaded.done:
            return uploaded
        return self.wait(uploaded.id, timeout=timeout)

    def wait(self, file_id: str, *, timeout: float = 900.0) -> m.File:
        """The file once `ready` or `failed`, by long polls of up to 30 s each; after
        `timeout` seconds, the file as it is."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            current = self.get(file_id, wait=min(MAX_WAIT_PER_POLL_S, remaining))
            if current.done or remaining <= 0:
                return current

    @route("GET", "/v1/files/{file_id}")
    def get(self, file_id: str, *, wait: float | None = None) -> m.File:
        """The file; with `wait` (≤ 30 s), answered as soon as it is ready or failed."""
        response = self._t.request("GET", f"/v1/files/{seg(file_id)}", params=params(wait=wait))
        return m.File.model_validate(response.json())

    @route("GET", "/v1/files")
    def list(
        self,
        *,
        status: str | None = None,
        conversation_id: str | None = None,
        project_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> m.Page[m.File]:
        query = params(
            status=status,
            conversation_id=conversation_id,
            project_id=project_id,
            limit=limit,
            cursor=cursor,
        )
        response = self._t.request("GET", "/v1/files", params=query)
        return m.Page[m.File].model_validate(response.json())

    def iter(
        self,
        *,
        status: str | None = None,
        conversation_id: str | None = None,
        project_id: str | None = None,
        page_size: int = 100,
    ) -> Iterator[m.File]:
        """Every file (newest first), page after page."""
        cursor: str | None = None
        while True:
            page = self.list(
                status=status,
                conversation_id=conversation_id,
                project_id=project_id,
                limit=page_size,
                cursor=cursor,
            )
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return

    @route("PATCH", "/v1/files/{file_id}")
    def update(self, file_id: str, *, project_id: str | None) -> m.File:
        """Move the file into a project (`project_id`), or out of it (None)."""
        payload = {"project_id": project_id}
        response = self._t.request("PATCH", f"/v1/files/{seg(file_id)}", json=payload)
        return m.File.model_validate(response.json())

    @route("DELETE", "/v1/files/{file_id}")
    def delete(self, file_id: str) -> None:
        self._t.request("DELETE", f"/v1/files/{seg(file_id)}")

    @route("GET", "/v1/files/{file_id}/content")
    def content(self, file_id: str) -> str:
        """The processed content (markdown, sampled table, description, …) as text."""
        response = self._t.request("GET", f"/v1/files/{seg(file_id)}/content")
        return response.text
