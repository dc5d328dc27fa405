"""HTTP client of `contextq workspace put|get|ls|rm` (SPEC §7, §9)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import httpx

from contextq.client import ClientError, Target, _client, _detail

CHUNK_BYTES = 1 << 20
TRANSFER_TIMEOUT_S = 600.0


def workspace_url(conversation_id: str, path: str = "") -> str:
    """The route of a workspace path, every byte percent-encoded (dots too, so no client
    resolves `..` before the server judges the path)."""
    base = f"/v1/conversations/{quote(conversation_id, safe='')}/workspace"
    if not path:
        return base
    return base + "/" + quote(path, safe="/").replace(".", "%2E")


def _checked(resp: httpx.Response, *ok: int) -> httpx.Response:
    if resp.status_code not in ok:
        raise ClientError(_detail(resp))
    return resp


def _read_chunks(fh: IO[bytes]) -> Iterator[bytes]:
    while chunk := fh.read(CHUNK_BYTES):
        yield chunk


def put(target: Target, conversation_id: str, local: Path, path: str | None) -> dict[str, Any]:
    """Upload `local` to `path` (default: its file name) in the conversation's workspace."""
    dest = path or local.name
    try:
        with _client(target, TRANSFER_TIMEOUT_S) as http, local.open("rb") as fh:
            size = local.stat().st_size
            resp = http.put(
                workspace_url(conversation_id, dest),
                content=_read_chunks(fh),
                headers={"Content-Length": str(size)},
            )
    except OSError as exc:
        raise ClientError(f"cannot read {local}: {exc.strerror or exc}") from exc
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach {target.api}: {exc}") from exc
    body: dict[str, Any] = _checked(resp, 201).json()
    return body


def get(target: Target, conversation_id: str, path: str, out: IO[bytes]) -> int:
    """Write the file's raw bytes to `out`; returns how many."""
    written = 0
    try:
        with (
            _client(target, TRANSFER_TIMEOUT_S) as http,
            http.stream("GET", workspace_url(conversation_id, path)) as resp,
        ):
            if resp.status_code != 200:
                resp.read()
                raise ClientError(_detail(resp))
            for chunk in resp.iter_bytes(CHUNK_BYTES):
                out.write(chunk)
                written += len(chunk)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach {target.api}: {exc}") from exc
    return written


def list_entries(target: Target, conversation_id: str, prefix: str = "") -> list[dict[str, Any]]:
    """Every entry under `prefix`, all pages."""
    entries: list[dict[str, Any]] = []
    params: dict[str, str] = {"limit": "1000", **({"prefix": prefix} if prefix else {})}
    try:
        with _client(target) as http:
            while True:
                resp = _checked(http.get(workspace_url(conversation_id), params=params), 200)
                page = resp.json()
                entries += page["data"]
                if not page.get("next_cursor"):
                    return entries
                params["cursor"] = page["next_cursor"]
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach {target.api}: {exc}") from exc


def remove(target: Target, conversation_id: str, path: str) -> None:
    try:
        with _client(target) as http:
            _checked(http.delete(workspace_url(conversation_id, path)), 204)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach {target.api}: {exc}") from exc
