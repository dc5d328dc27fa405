"""`contextq workspace put|get|ls|rm`: a conversation's workspace from the shell."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from contextq.settings import get_settings

workspace_app = typer.Typer(help="A conversation's workspace (/workspace).", no_args_is_help=True)

ConversationArg = Annotated[str, typer.Argument(help="Conversation id.")]
ApiOpt = Annotated[
    str | None,
    typer.Option("--api", envvar="CONTEXTQ_API_URL", help="API base URL."),
]
KeyOpt = Annotated[str | None, typer.Option("--key", envvar="CONTEXTQ_API_KEY", help="API key.")]


def _fail(command: str, exc: Exception) -> typer.Exit:
    print(f"contextq workspace {command}: {exc}", file=sys.stderr, flush=True)
    return typer.Exit(1)


@workspace_app.command("put")
def put(
    conversation_id: ConversationArg,
    local_file: Annotated[
        Path, typer.Argument(help="File to upload.", exists=True, dir_okay=False, readable=True)
    ],
    path: Annotated[str | None, typer.Argument(help="Workspace path (default: file name).")] = None,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Write LOCAL_FILE to PATH in the workspace (replacing what was there)."""
    from contextq import client_workspace as ws
    from contextq.client import ClientError, resolve_target

    try:
        entry = ws.put(resolve_target(api, key, get_settings()), conversation_id, local_file, path)
    except ClientError as exc:
        raise _fail("put", exc) from None
    print(f"/workspace/{entry['path']}\t{entry['size_bytes']} bytes\tfile {entry['file_id']}")


@workspace_app.command("get")
def get(
    conversation_id: ConversationArg,
    path: Annotated[str, typer.Argument(help="Workspace path.")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write here (default: stdout).")
    ] = None,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """The file's raw bytes, on stdout or into -o FILE."""
    from contextq import client_workspace as ws
    from contextq.client import ClientError, resolve_target

    try:
        target = resolve_target(api, key, get_settings())
        if output is None:
            ws.get(target, conversation_id, path, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return
        partial = output.with_name(output.name + ".part")  # -o FILE appears whole or not at all
        try:
            with partial.open("wb") as fh:
                ws.get(target, conversation_id, path, fh)
            partial.replace(output)
        finally:
            partial.unlink(missing_ok=True)
    except (ClientError, OSError) as exc:
        raise _fail("get", exc) from None


@workspace_app.command("ls")
def ls(
    conversation_id: ConversationArg,
    prefix: Annotated[str, typer.Argument(help="Only paths starting with this.")] = "",
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """List the workspace's files: path, size, status, File id."""
    from contextq import client_workspace as ws
    from contextq.client import ClientError, resolve_target

    try:
        entries = ws.list_entries(resolve_target(api, key, get_settings()), conversation_id, prefix)
    except ClientError as exc:
        raise _fail("ls", exc) from None
    table = Table(title=f"workspace of {conversation_id}")
    for column in ("path", "bytes", "status", "file"):
        table.add_column(column, overflow="fold")
    for e in entries:
        table.add_row(e["path"], str(e["size_bytes"]), str(e["status"]), str(e["file_id"]))
    Console().print(table)


@workspace_app.command("rm")
def rm(
    conversation_id: ConversationArg,
    path: Annotated[str, typer.Argument(help="Workspace path.")],
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Delete a file from the workspace."""
    from contextq import client_workspace as ws
    from contextq.client import ClientError, resolve_target

    try:
        ws.remove(resolve_target(api, key, get_settings()), conversation_id, path)
    except ClientError as exc:
        raise _fail("rm", exc) from None
