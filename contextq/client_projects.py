"""HTTP client of `contextq projects create|ls|search` (SPEC §7)."""

from __future__ import annotations

from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from contextq.client import ClientError, Target, _client, _detail

SNIPPET_CHARS = 160


def _call(target: Target, method: str, path: str, **kwargs: Any) -> Any:
    with _client(target) as http:
        try:
            resp = http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {target.api}: {exc}") from exc
    if resp.status_code not in (200, 201):
        raise ClientError(_detail(resp))
    return resp.json()


def create_project(target: Target, name: str, instructions: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if instructions is not None:
        body["instructions"] = instructions
    project: dict[str, Any] = _call(target, "POST", "/v1/projects", json=body)
    return project


def list_projects(target: Target) -> list[dict[str, Any]]:
    """Every project of the key's owner, newest first (all pages)."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {"limit": 200, **({"cursor": cursor} if cursor else {})}
        page = _call(target, "GET", "/v1/projects", params=params)
        out.extend(page["data"])
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def search_project(target: Target, project_id: str, query: str, limit: int) -> list[dict[str, Any]]:
    page = _call(
        target, "GET", f"/v1/projects/{project_id}/search", params={"q": query, "limit": limit}
    )
    hits: list[dict[str, Any]] = page["data"]
    return hits


def projects_table(projects: list[dict[str, Any]]) -> Table:
    table = Table(title="contextq projects")
    for column in ("id", "name", "files", "ready", "tokens", "chunks", "created"):
        table.add_column(column, overflow="fold")
    for p in projects:
        table.add_row(
            p["id"],
            p["name"],
            str(p["file_count"]),
            str(p["ready_count"]),
            str(p["token_count"]),
            str(p["chunk_count"]),
            str(p["created_at"])[:19].replace("T", " "),
        )
    return table


def location(chunk: dict[str, Any]) -> str:
    """ "chunk 12, page 40" / "chunk 3, sheet Q1, rows 51-75" / "chunk 2, lines 10-40"."""
    parts = [f"chunk {chunk['index'] + 1}"]
    if chunk.get("page") is not None:
        parts.append(f"page {chunk['page']}")
    if chunk.get("sheet") is not None:
        parts.append(f"sheet {chunk['sheet']}")
    if chunk.get("line_start") is not None:
        parts.append(f"lines {chunk['line_start']}-{chunk.get('line_end') or chunk['line_start']}")
    return ", ".join(parts)


def hits_table(hits: list[dict[str, Any]]) -> Table:
    table = Table(title="contextq projects search")
    for column in ("#", "score", "file", "where", "text"):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(hits, 1):
        text = " ".join(hit["text"].split())
        if len(text) > SNIPPET_CHARS:
            text = text[: SNIPPET_CHARS - 1] + "…"
        table.add_row(str(rank), f"{hit['score']:.3g}", hit["title"], location(hit["chunk"]), text)
    return table


def print_table(table: Table, console: Console | None = None) -> None:
    (console or Console()).print(table)
