"""`contextq workspace put|get|ls|rm`: a conversation's workspace from the shell, over
the SDK's `client.workspace`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cli.client import ClientError, connect
from contextq.settings import get_settings
from contextq_client import ContextqError

workspace_app = typer.Typer(help="A conversation's workspace (/workspace).", no_args_is_help=True)

ConversationArg = Annotated[str, typer.Argument(help="Conversation id.")]
ApiOpt = Annotated[
    str | None,
    typer.Option("--api", envvar="CONTEXTQ_API_URL", help="API base URL."),
]
KeyOpt = Annotated[str | None, typer.Option("--key", envvar="CONTEXTQ_API_KEY", help="API key.")]
Failure = (ClientError, ContextqError)


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
    try:
        with connect(api, key, get_settings()) as client:
            entry = client.workspace.put(conversation_id, path or local_file.name, local_file)
    except OSError as exc:
        raise _fail(
            "put", ClientError(f"cannot read {local_file}: {exc.strerror or exc}")
        ) from None
    except Failure as exc:
        raise _fail("put", exc) from None
    print(f"/workspace/{entry.path}\t{entry.size_bytes} bytes\tfile {entry.file_id}")


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
    try:
        with connect(api, key, get_settings()) as client:
            if output is None:
                client.workspace.download(conversation_id, path, sys.stdout.buffer)
                sys.stdout.buffer.flush()
                return
            partial = output.with_name(output.name + ".part")  # -o FILE: whole or not at all
            try:
                with partial.open("wb") as fh:
                    client.workspace.download(conversation_id, path, fh)
                partial.replace(output)
            finally:
                partial.unlink(missing_ok=True)
    except (*Failure, OSError) as exc:
        raise _fail("get", exc) from None


@workspace_app.command("ls")
def ls(
    conversation_id: ConversationArg,
    prefix: Annotated[str, typer.Argument(help="Only paths starting with this.")] = "",
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """List the workspace's files: path, size, status, File id."""
    try:
        with connect(api, key, get_settings()) as client:
            entries = list(client.workspace.iter(conversation_id, prefix=prefix or None))
    except Failure as exc:
        raise _fail("ls", exc) from None
    table = Table(title=f"workspace of {conversation_id}")
    for column in ("path", "bytes", "status", "file"):
        table.add_column(column, overflow="fold")
    for e in entries:
        table.add_row(e.path, str(e.size_bytes), str(e.status), str(e.file_id))
    Console().print(table)


@workspace_app.command("rm")
def rm(
    conversation_id: ConversationArg,
    path: Annotated[str, typer.Argument(help="Workspace path.")],
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Delete a file from the workspace."""
    try:
        with connect(api, key, get_settings()) as client:
            client.workspace.delete(conversation_id, path)
    except Failure as exc:
        raise _fail("rm", exc) from None
