"""`contextq projects create|ls|search` (SPEC §7): the HTTP client is
`contextq.client_projects`; this module only declares the commands."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from cli.options import ApiOpt, KeyOpt
from contextq.settings import get_settings

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
    from contextq.client import ClientError, resolve_target
    from contextq.client_projects import create_project

    try:
        project = create_project(resolve_target(api, key, get_settings()), name, instructions)
    except ClientError as exc:
        _say(f"contextq projects create: {exc}")
        raise typer.Exit(1) from None
    _say(f"created project {project['name']!r}; upload into it with --project-id {project['id']}")
    _out(project["id"])


@projects_app.command("ls")
def projects_ls(
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw list.")] = False,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Your projects with their file, token and chunk counts."""
    import json

    from contextq.client import ClientError, resolve_target
    from contextq.client_projects import list_projects, print_table, projects_table

    try:
        projects = list_projects(resolve_target(api, key, get_settings()))
    except ClientError as exc:
        _say(f"contextq projects ls: {exc}")
        raise typer.Exit(1) from None
    if as_json:
        _out(json.dumps(projects, indent=2))
    else:
        print_table(projects_table(projects))


@projects_app.command("search")
def projects_search(  # noqa: PLR0917  (typer maps parameters to options)
    project_id: Annotated[str, typer.Argument(help="Project id.")],
    query: Annotated[str, typer.Argument(help="What to look for (any text).")],
    limit: Annotated[int, typer.Option(min=1, max=100, help="Chunks to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw hits.")] = False,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """The project's chunks that best match QUERY, best first."""
    import json

    from contextq.client import ClientError, resolve_target
    from contextq.client_projects import hits_table, print_table, search_project

    try:
        hits = search_project(resolve_target(api, key, get_settings()), project_id, query, limit)
    except ClientError as exc:
        _say(f"contextq projects search: {exc}")
        raise typer.Exit(1) from None
    if as_json:
        _out(json.dumps(hits, indent=2))
    else:
        print_table(hits_table(hits))
