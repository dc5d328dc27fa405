"""More resource namespaces (synchronous): memory, projects, workspace, webhooks, tools.
`async_resources_more.py` is generated from this file by `scripts/gen_async_sdk.py`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal
from urllib.parse import quote

from contextq_client import models as m
from contextq_client.routing import (
    CHUNK_BYTES,
    TRANSFER_TIMEOUT_S,
    body,
    params,
    put_body,
    route,
    seg,
)
from contextq_client.transport import SyncTransport

JsonObject = dict[str, Any]


class Resource:
    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport


def _memory(conversation_id: str, tail: str = "") -> str:
    return f"/v1/conversations/{seg(conversation_id)}/memory{tail}"


def _with_seqs(payload: JsonObject, seqs: Sequence[int] | None) -> JsonObject:
    """The body with `seqs` (the source messages) when given; the API checks them."""
    if seqs is not None:
        payload["seqs"] = list(seqs)
    return payload


class Memory(Resource):
    """A conversation's hierarchical working memory (goal, subtasks, decisions, errors).
    Snapshot and statistics are typed; the other answers are returned as dicts."""

    @route("GET", "/v1/conversations/{conversation_id}/memory")
    def get(self, conversation_id: str) -> m.MemorySnapshot:
        response = self._t.request("GET", _memory(conversation_id))
        return m.MemorySnapshot.model_validate(response.json())

    @route("DELETE", "/v1/conversations/{conversation_id}/memory")
    def reset(self, conversation_id: str) -> None:
        self._t.request("DELETE", _memory(conversation_id))

    @route("GET", "/v1/conversations/{conversation_id}/memory/context")
    def context(self, conversation_id: str) -> m.MemoryContext:
        response = self._t.request("GET", _memory(conversation_id, "/context"))
        return m.MemoryContext.model_validate(response.json())

    @route("GET", "/v1/conversations/{conversation_id}/memory/stats")
    def stats(self, conversation_id: str) -> m.MemoryStats:
        response = self._t.request("GET", _memory(conversation_id, "/stats"))
        return m.MemoryStats.model_validate(response.json())

    @route("POST", "/v1/conversations/{conversation_id}/memory/actions")
    def add_action(
        self,
        conversation_id: str,
        *,
        action_type: str,
        content: str = "",
        success: bool | None = True,
        metadata: JsonObject | None = None,
    ) -> JsonObject:
        payload = {
            "action_type": action_type,
            "content": content,
            "success": success,
            "metadata": metadata,
        }
        response = self._t.request("POST", _memory(conversation_id, "/actions"), json=payload)
        answer: JsonObject = response.json()
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/errors")
    def track_error(
        self, conversation_id: str, error: str, *, seqs: Sequence[int] | None = None
    ) -> JsonObject:
        """Count an error under its pattern: `{"pattern", "count", "alert", "last_seen"}`.
        `seqs`: the messages it came from (summaries cite them as `(#12)`)."""
        path = _memory(conversation_id, "/errors")
        payload = _with_seqs({"error": error}, seqs)
        answer: JsonObject = self._t.request_json("POST", path, json=payload)
        return answer

    @route("GET", "/v1/conversations/{conversation_id}/memory/export")
    def export(self, conversation_id: str) -> JsonObject:
        answer: JsonObject = self._t.request_json("GET", _memory(conversation_id, "/export"))
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/import")
    def import_(self, conversation_id: str, document: JsonObject) -> JsonObject:
        path = _memory(conversation_id, "/import")
        answer: JsonObject = self._t.request_json("POST", path, json=document)
        return answer

    @route("PUT", "/v1/conversations/{conversation_id}/memory/goal")
    def set_goal(
        self,
        conversation_id: str,
        text: str,
        *,
        subtasks: list[str] | None = None,
        seqs: Sequence[int] | None = None,
    ) -> JsonObject:
        payload = _with_seqs({"text": text, "subtasks": subtasks or []}, seqs)
        path = _memory(conversation_id, "/goal")
        answer: JsonObject = self._t.request_json("PUT", path, json=payload)
        return answer

    @route("PUT", "/v1/conversations/{conversation_id}/memory/phase")
    def set_phase(self, conversation_id: str, phase: str) -> JsonObject:
        path = _memory(conversation_id, "/phase")
        answer: JsonObject = self._t.request_json("PUT", path, json={"phase": phase})
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/decisions")
    def add_decision(
        self,
        conversation_id: str,
        decision: str,
        *,
        rationale: str = "",
        impact: Literal["low", "medium", "high"] = "medium",
        seqs: Sequence[int] | None = None,
    ) -> JsonObject:
        payload = _with_seqs({"decision": decision, "rationale": rationale, "impact": impact}, seqs)
        path = _memory(conversation_id, "/decisions")
        answer: JsonObject = self._t.request_json("POST", path, json=payload)
        return answer

    @route("POST", "/v1/conversations/{conversation_id}/memory/subtasks/{name}/complete")
    def complete_subtask(self, conversation_id: str, name: str) -> JsonObject:
        path = _memory(conversation_id, f"/subtasks/{seg(name)}/complete")
        answer: JsonObject = self._t.request_json("POST", path)
        return answer


class Projects(Resource):
    @route("POST", "/v1/projects")
    def create(self, name: str, *, instructions: str | None = None) -> m.Project:
        payload = body(name=name, instructions=instructions)
        return m.Project.model_validate(self._t.request_json("POST", "/v1/projects", json=payload))

    @route("GET", "/v1/projects")
    def list(self, *, limit: int | None = None, cursor: str | None = None) -> m.Page[m.Project]:
        response = self._t.request("GET", "/v1/projects", params=params(limit=limit, cursor=cursor))
        return m.Page[m.Project].model_validate(response.json())

    def iter(self, *, page_size: int = 100) -> Iterator[m.Project]:
        """Every project, page after page."""
        cursor: str | None = None
        while True:
            page = self.list(limit=page_size, cursor=cursor)
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return

    @route("GET", "/v1/projects/{project_id}")
    def get(self, project_id: str) -> m.Project:
        response = self._t.request("GET", f"/v1/projects/{seg(project_id)}")
        return m.Project.model_validate(response.json())

    @route("PATCH", "/v1/projects/{project_id}")
    def update(self, project_id: str, **fields: Any) -> m.Project:
        """Change `name` and/or `instructions`."""
        response = self._t.request("PATCH", f"/v1/projects/{seg(project_id)}", json=fields)
        return m.Project.model_validate(response.json())

    @route("DELETE", "/v1/projects/{project_id}")
    def delete(self, project_id: str) -> None:
        self._t.request("DELETE", f"/v1/projects/{seg(project_id)}")

    @route("GET", "/v1/projects/{project_id}/search")
    def search(
        self,
        project_id: str,
        q: str,
        *,
        limit: int | None = None,
        mode: Literal["hybrid", "bm25", "dense"] | None = None,
    ) -> m.SearchResults:
        """The best chunks, best first: `hybrid` (the default: bm25 and dense fused),
        `bm25` (words only) or `dense` (meaning only)."""
        path = f"/v1/projects/{seg(project_id)}/search"
        response = self._t.request("GET", path, params=params(q=q, limit=limit, mode=mode))
        return m.SearchResults.model_validate(response.json())


def _workspace(conversation_id: str, path: str | None = None) -> str:
    """The route of a workspace path, every byte percent-encoded (dots too, so no client
    resolves `..` before the server judges the path)."""
    base = f"/v1/conversations/{seg(conversation_id)}/workspace"
    return base if path is None else f"{base}/" + quote(path, safe="/").replace(".", "%2E")


class Workspace(Resource):
    """A conversation's workspace: files written by path, read raw or processed."""

    @route("PUT", "/v1/conversations/{conversation_id}/workspace/{path}")
    def put(self, conversation_id: str, path: str, content: bytes | Path) -> m.WorkspaceEntry:
        """Write `content` (bytes, or a local file streamed) to `path`, replacing it."""
        url = _workspace(conversation_id, path)
        kwargs = put_body(content)
        response = self._t.request("PUT", url, **kwargs)
        return m.WorkspaceEntry.model_validate(response.json())

    @route("GET", "/v1/conversations/{conversation_id}/workspace/{path}")
    def read(self, conversation_id: str, path: str) -> bytes:
        """The file's raw bytes."""
        response = self._t.request("GET", _workspace(conversation_id, path))
        return response.content

    def download(self, conversation_id: str, path: str, out: IO[bytes]) -> int:
        """Stream the file's raw bytes into `out`; how many were written."""
        written = 0
        url = _workspace(conversation_id, path)
        with self._t.stream("GET", url, timeout=TRANSFER_TIMEOUT_S) as response:
            for chunk in response.iter_bytes(CHUNK_BYTES):
                out.write(chunk)
                written += len(chunk)
        return written

    def processed(
        self,
        conversation_id: str,
        path: str,
        *,
        offset: int | None = None,
        limit: int | None = None,
        sheet: str | None = None,
    ) -> m.WorkspaceProcessedView:
        """The processed text (`view=processed`), or a portion of it with offset/limit."""
        query = params(view="processed", offset=offset, limit=limit, sheet=sheet)
        response = self._t.request("GET", _workspace(conversation_id, path), params=query)
        return m.WorkspaceProcessedView.model_validate(response.json())

    @route("DELETE", "/v1/conversations/{conversation_id}/workspace/{path}")
    def delete(self, conversation_id: str, path: str) -> None:
        self._t.request("DELETE", _workspace(conversation_id, path))

    @route("GET", "/v1/conversations/{conversation_id}/workspace")
    def list(
        self,
        conversation_id: str,
        *,
        prefix: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> m.Page[m.WorkspaceEntry]:
        query = params(prefix=prefix, limit=limit, cursor=cursor)
        response = self._t.request("GET", _workspace(conversation_id), params=query)
        return m.Page[m.WorkspaceEntry].model_validate(response.json())

    def iter(
        self, conversation_id: str, *, prefix: str | None = None, page_size: int = 500
    ) -> Iterator[m.WorkspaceEntry]:
        """Every entry (by path), page after page."""
        cursor: str | None = None
        while True:
            page = self.list(conversation_id, prefix=prefix, limit=page_size, cursor=cursor)
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return


class Webhooks(Resource):
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


class Tools(Resource):
    """contextq's built-in tools (SPEC §9): read a workspace path in portions, list the
    workspace, search the project, read the memory, record a decision or an error."""

    @route("GET", "/v1/tools")
    def list(self, *, format: m.ToolFormat = "openai") -> m.ToolDefinitionList:
        """Their definitions, in a context format's shape (`format=openai`, …) or MCP's."""
        response = self._t.request("GET", "/v1/tools", params=params(format=format))
        return m.ToolDefinitionList.model_validate(response.json())

    @route("POST", "/v1/conversations/{conversation_id}/tools/{name}")
    def execute(
        self, conversation_id: str, name: str, arguments: JsonObject | str | None = None
    ) -> m.ToolResult:
        """Run one on the conversation with the model's arguments (an object, or the JSON
        text of one as OpenAI's tool calls carry it); `.content` is the result's text."""
        path = f"/v1/conversations/{seg(conversation_id)}/tools/{seg(name)}"
        if isinstance(arguments, str):
            sent: dict[str, Any] = {
                "content": arguments.encode(),
                "headers": {"Content-Type": "application/json"},
            }
        else:
            sent = {"json": arguments or {}}
        response = self._t.request("POST", path, **sent)
        return m.ToolResult.model_validate(response.json())
