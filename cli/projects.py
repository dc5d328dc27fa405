"""`contextq projects create|ls|search` (docs/cli.md), over the SDK's `client.projects`."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from cli.client import ClientError, connect
from cli.options import ApiOpt, KeyOpt
from contextq.settings import get_settings
from contextq_client import ContextqError

SNIPPET_CHARS = 160
Failure = (ClientError, ContextqError)


class SearchMode(StrEnum):
    hybrid = "hybrid"
    bm25 = "bm25"
    dense = "dense"


projects_app = typer.Typer(help="Projects: files close at hand, searchable.", no_args_is_help=True)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _out(message: str) -> None:
    print(message, flush=True)


@projects_app.command("create")
def projects_create(
    name: Annotated[str, typer.Argument(help="Project name.")],
    instructions: Annotated[
        str | None, typer.Option(help="Opens the project's documents in every context.")
    ] = None,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Create a project and print its id alone on stdout."""
    try:
        with connect(api, key, get_settings()) as client:
            project = client.projects.create(name, instructions=instructions)
    except Failure as exc:
        _say(f"contextq projects create: {exc}")
        raise typer.Exit(1) from None
    _say(f"created project {project.name!r}; upload into it with --project-id {project.id}")
    _out(project.id)


@projects_app.command("ls")
def projects_ls(
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw list.")] = False,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Your projects with their file, token and chunk counts."""
    try:
        with connect(api, key, get_settings()) as client:
            projects = [p.model_dump(mode="json") for p in client.projects.iter(page_size=200)]
    except Failure as exc:
        _say(f"contextq projects ls: {exc}")
        raise typer.Exit(1) from None
    if as_json:
        _out(json.dumps(projects, indent=2))
    else:
        Console().print(projects_table(projects))


@projects_app.command("search")
def projects_search(  # noqa: PLR0917  (typer maps parameters to options)
    project_id: Annotated[str, typer.Argument(help="Project id.")],
    query: Annotated[str, typer.Argument(help="What to look for (any text).")],
    limit: Annotated[int, typer.Option(min=1, max=100, help="Chunks to show.")] = 10,
    mode: Annotated[
        SearchMode,
        typer.Option(help="hybrid: full-text and dense fused; bm25 or dense: one alone."),
    ] = SearchMode.hybrid,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw hits.")] = False,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """The project's chunks that best match QUERY, best first."""
    try:
        with connect(api, key, get_settings()) as client:
            hits = _search(client, project_id, query, limit, mode.value)
    except Failure as exc:
        _say(f"contextq projects search: {exc}")
        raise typer.Exit(1) from None
    if as_json:
        _out(json.dumps(hits, indent=2))
    else:
        Console().print(hits_table(hits))


def _search(client: Any, project_id: str, query: str, limit: int, mode: str) -> list[Any]:
    """The hits as JSON."""
    results = client.projects.search(project_id, query, limit=limit, mode=mode)
    return [h.model_dump(mode="json") for h in results.data]


# -- tables ----------------------------------------------------------------------------


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
