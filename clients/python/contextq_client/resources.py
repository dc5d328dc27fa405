"""The SDK's resource namespaces (synchronous). `async_resources.py` is generated from
this file by `scripts/gen_async_sdk.py` (a test regenerates it and compares): edit here.

Conventions the generator relies on: every I/O call is `self._t.request(…)` or a call of
another method of the same resource (`self.list(…)`), and sleeping is `time.sleep`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from contextq_client import models as m
from contextq_client.record import RecordFormat, record_body
from contextq_client.routing import body, params, route, seg
from contextq_client.transport import SyncTransport

FileInput = str | Path | bytes | IO[bytes]
MAX_WAIT_PER_POLL_S = 30.0  # the API's long-poll limit


def _file_part(file: FileInput, filename: str | None) -> tuple[str, bytes]:
    """(name, bytes) of an upload; the bytes are read once so a retry can resend them."""
    if isinstance(file, bytes):
        return filename or "upload.bin", file
    if isinstance(file, str | Path):
        path = Path(file)
        return filename or path.name, path.read_bytes()
    name = filename or Path(str(getattr(file, "name", "upload.bin"))).name
    return name, file.read()


class Resource:
    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport


class Files(Resource):
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
        """Upload a path, bytes or a binary file object. With `wait=True`, long-poll until
        the file is `ready` or `failed` (or `timeout` seconds pass: then its current state)."""
        name, content = _file_part(file, filename)
        form = body(conversation_id=conversation_id, project_id=project_id)
        response = self._t.request("POST", "/v1/files", files={"file": (name, content)}, data=form)
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


class Conversations(Resource):
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


class Messages(Resource):
    @route("POST", "/v1/conversations/{conversation_id}/messages")
    def create(self, conversation_id: str, **message: Any) -> m.Message:
        """Append one message (`role`, `content`, `tool_calls`, `tool_call_id`, `pinned`,
        `file_ids`, …)."""
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        response = self._t.request("POST", path, json=body(**message))
        return m.Message.model_validate(response.json())

    def append(self, conversation_id: str, messages: list[dict[str, Any]]) -> m.MessageBatchResult:
        """Append a batch in one transaction (up to 10 000 messages)."""
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        response = self._t.request("POST", path, json={"messages": messages})
        return m.MessageBatchResult.model_validate(response.json())

    @route("POST", "/v1/conversations/{conversation_id}/messages")
    def record(
        self,
        conversation_id: str,
        response: Any,
        *,
        format: RecordFormat | None = None,
        model: str | None = None,
    ) -> m.MessageBatchResult:
        """Store what a vendor SDK returned, natively and with its model: an Anthropic
        `Message`, an OpenAI `Response` (or `ChatCompletion`), a google-genai
        `GenerateContentResponse`, or their dicts. With `format=` ("anthropic",
        "responses", "gemini", "openai"), the turns an agent built in that format instead
        (one or a list): Anthropic `{"role": "user", "content": [tool_result…]}`, Responses
        `function_call_output` items, Gemini `Content`s with `functionResponse` parts.
        `model`: the model that produced the turn (default: the response's own)."""
        payload = record_body(response, format=format, model=model)
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        answer = self._t.request("POST", path, json=payload)
        return m.MessageBatchResult.model_validate(answer.json())

    @route("GET", "/v1/conversations/{conversation_id}/messages")
    def list(
        self,
        conversation_id: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        seqs: Sequence[int] | None = None,
    ) -> m.Page[m.Message]:
        """A page of the original history; with `seqs`, exactly those messages (the
        `(#12, #40)` a summary line cites), in seq order."""
        path = f"/v1/conversations/{seg(conversation_id)}/messages"
        wanted = ",".join(str(seq) for seq in seqs) if seqs is not None else None
        query = params(limit=limit, cursor=cursor, seqs=wanted)
        response = self._t.request("GET", path, params=query)
        return m.Page[m.Message].model_validate(response.json())

    def iter(self, conversation_id: str, *, page_size: int = 200) -> Iterator[m.Message]:
        """Every message, page after page."""
        cursor: str | None = None
        while True:
            page = self.list(conversation_id, limit=page_size, cursor=cursor)
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return

    @route("PATCH", "/v1/conversations/{conversation_id}/messages/{message_id}")
    def pin(self, conversation_id: str, message_id: str, *, pinned: bool = True) -> m.Message:
        path = f"/v1/conversations/{seg(conversation_id)}/messages/{seg(message_id)}"
        response = self._t.request("PATCH", path, json={"pinned": pinned})
        return m.Message.model_validate(response.json())


class ContextResource(Resource):
    @route("GET", "/v1/conversations/{conversation_id}/context")
    def get(
        self,
        conversation_id: str,
        *,
        model: str | None = None,
        format: m.ContextFormat | None = None,
        strategy: str | None = None,
        options: dict[str, Any] | None = None,
        force_filter: bool | None = None,
        skip_filter: bool | None = None,
        tools_used: list[str] | None = None,
        tools: list[dict[str, Any]] | None = None,
        query: str | None = None,
        datetime_granularity: Literal["day", "minute"] | None = None,
        builtin_tools: bool | None = None,
    ) -> m.Context:
        """The ready-to-send context: messages (and `system`), tools, where tokens went.
        `builtin_tools=True` adds contextq's tools that follow a stub (`workspace_read`,
        `workspace_list`, `project_search`; run them with `client.tools.execute`)."""
        query_params = params(
            model=model,
            format=format,
            strategy=strategy,
            options=options,
            force_filter=force_filter,
            skip_filter=skip_filter,
            tools_used=",".join(tools_used) if tools_used is not None else None,
            tools=json.dumps(tools) if tools is not None else None,
            query=query,
            datetime_granularity=datetime_granularity,
            builtin_tools=builtin_tools,
        )
        path = f"/v1/conversations/{seg(conversation_id)}/context"
        response = self._t.request("GET", path, params=query_params)
        return m.Context.model_validate(response.json())


class Jobs(Resource):
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


class OwnerSettingsResource(Resource):
    @route("GET", "/v1/settings")
    def get(self) -> m.OwnerSettings:
        return m.OwnerSettings.model_validate(self._t.request_json("GET", "/v1/settings"))

    @route("PUT", "/v1/settings")
    def update(self, *, system_prompt: str | None) -> m.OwnerSettings:
        """Save the owner's system prompt (None: back to the packaged default)."""
        payload = {"system_prompt": system_prompt}
        response = self._t.request("PUT", "/v1/settings", json=payload)
        return m.OwnerSettings.model_validate(response.json())
