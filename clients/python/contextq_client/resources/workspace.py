"""`client.workspace`: a conversation's workspace, files written by path and read raw
(whole or streamed) or processed (in portions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO
from urllib.parse import quote

from contextq_client import models as m
from contextq_client.payload import CHUNK_BYTES, TRANSFER_TIMEOUT_S, put_body
from contextq_client.routing import params, route, seg
from contextq_client.transport import Resource, SyncTransport


def _workspace(conversation_id: str, path: str | None = None) -> str:
    """The route of a workspace path, every byte percent-encoded (dots too, so no client
    resolves `..` before the server judges the path)."""
    base = f"/v1/conversations/{seg(conversation_id)}/workspace"
    return base if path is None else f"{base}/" + quote(path, safe="/").replace(".", "%2E")


class Workspace(Resource[SyncTransport]):
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
