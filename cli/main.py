"""The `contextq` command: the whole stack (`up`), client commands, and each part alone.

`contextq up` lives in `cli.launcher`, the client commands' helpers in `cli.client` (over
the SDK, `contextq_client`);
this module only declares the commands.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from cli.keys import keys_app
from cli.options import ApiOpt, KeyOpt
from cli.projects import projects_app
from cli.workspace import workspace_app
from contextq.settings import get_settings

app = typer.Typer(
    name="contextq",
    help="Prepares context for LLM agents: uploads and long histories go to Celery.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(keys_app, name="keys")
app.add_typer(workspace_app, name="workspace")
app.add_typer(projects_app, name="projects")

PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _out(message: str) -> None:
    print(message, flush=True)


def _exec(argv: list[str], extra_env: dict[str, str] | None = None) -> NoReturn:
    """Replace this process with the part (signals then reach it directly)."""
    env = {**os.environ, **(extra_env or {})}
    env.setdefault("ORT_DISABLE_TELEMETRY", "1")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env)  # noqa: S606  (fixed argv built by cli.launcher.argv)


def _cores() -> int:
    return os.cpu_count() or 1


def _log_level_env(loglevel: str | None) -> dict[str, str]:
    """`--loglevel` of a part: LOG_LEVEL for that process (logging is configured from it)."""
    return {"LOG_LEVEL": loglevel.upper()} if loglevel else {}


# -- the whole stack --------------------------------------------------------------------


@app.command()
def up(  # noqa: PLR0917  (typer maps parameters to options)
    host: Annotated[str, typer.Option(help="API bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="API port.")] = 8000,
    flower_port: Annotated[int, typer.Option(help="Flower port (bound to 127.0.0.1).")] = 5555,
    concurrency: Annotated[
        int | None, typer.Option(help="Worker processes (default: number of cores).")
    ] = None,
    api_workers: Annotated[
        int | None, typer.Option(help="API processes (default: number of cores).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for every part.")] = 120.0,
) -> None:
    """Run the whole stack on this machine: Valkey, API, worker, beat, Flower.

    DATA_DIR (default ./.contextq) holds the database, blobs, broker data, logs and
    the development API key. Ctrl-C or SIGTERM stops every process.
    """
    from cli.launcher import UpOptions, run_up  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    options = UpOptions(
        host=host,
        port=port,
        flower_port=flower_port,
        concurrency=concurrency or _cores(),
        api_workers=api_workers or _cores(),
        timeout_s=timeout,
    )
    raise typer.Exit(run_up(get_settings(), options, say=_say, out=_out))


# -- client commands -------------------------------------------------------------------


@app.command()
def upload(  # noqa: PLR0917  (typer maps parameters to options)
    files: Annotated[
        list[Path],
        typer.Argument(help="Files to upload.", exists=True, dir_okay=False, readable=True),
    ],
    conversation_id: Annotated[str | None, typer.Option(help="Attach to a conversation.")] = None,
    project_id: Annotated[str | None, typer.Option(help="Attach to a project.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for processing.")] = 900.0,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Upload files, wait until each is ready or failed, print a table."""
    from cli.client import ClientError, resolve_target  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from cli.client import upload as do_upload  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    try:
        target = resolve_target(api, key, get_settings())
        code = do_upload(
            target, files, conversation_id=conversation_id, project_id=project_id, timeout_s=timeout
        )
    except ClientError as exc:
        _say(f"contextq upload: {exc}")
        raise typer.Exit(1) from None
    raise typer.Exit(code)


@app.command()
def context(  # noqa: PLR0917  (typer maps parameters to options)
    conversation_id: Annotated[str, typer.Argument(help="Conversation id.")],
    strategy: Annotated[
        str | None, typer.Option(help="token_budget, sliding_window, noop or hierarchical.")
    ] = None,
    options: Annotated[str | None, typer.Option(help="Strategy options as JSON.")] = None,
    model: Annotated[str | None, typer.Option(help="Target model.")] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="The answer's format (the API's format=).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Filter even under the threshold.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw answer.")] = False,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """The filtering report of a conversation's ready-to-send context."""
    from cli.client import ClientError, fetch_context, print_context_report, resolve_target  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from contextq.history.types import FORMAT_NAMES  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    if fmt is not None and fmt not in FORMAT_NAMES:
        _say(f"contextq context: --format must be one of {', '.join(FORMAT_NAMES)}")
        raise typer.Exit(2)
    try:
        target = resolve_target(api, key, get_settings())
        ctx = fetch_context(
            target,
            conversation_id,
            strategy=strategy,
            options=options,
            model=model,
            fmt=fmt,
            force_filter=force,
        )
    except ClientError as exc:
        _say(f"contextq context: {exc}")
        raise typer.Exit(1) from None
    if as_json:
        _out(json.dumps(ctx, indent=2))
    else:
        print_context_report(ctx)


@app.command()
def mcp(
    conversation_id: Annotated[
        str, typer.Option("--conversation", help="The conversation the tools act on.")
    ],
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Serve contextq's tools to an MCP client over stdio (read what a stub names, list
    the workspace, search the project, the memory), for one conversation."""
    from cli.client import ClientError, resolve_target  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from cli.mcp import serve_stdio  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    try:
        serve_stdio(resolve_target(api, key, get_settings()), conversation_id)
    except ClientError as exc:
        _say(f"contextq mcp: {exc}")
        raise typer.Exit(1) from None


@app.command()
def events(
    last_event_id: Annotated[
        int | None,
        typer.Option("--last-event-id", help="Start after this event id (0: all kept, 24 h)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    api: ApiOpt = None,
    key: KeyOpt = None,
) -> None:
    """Follow this key's events (GET /v1/events) and print one line each, until Ctrl-C."""
    from cli.client import ClientError, connect, event_line  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from contextq_client import ContextqError  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    try:
        with connect(api, key, get_settings()) as client:
            for event in client.events.follow(last_event_id=last_event_id):
                body = event.model_dump(mode="json")
                _out(json.dumps(body, ensure_ascii=False) if as_json else event_line(body))
    except (ClientError, ContextqError) as exc:
        _say(f"contextq events: {exc}")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


# -- each part alone (docker-compose runs these) ----------------------------------------


@app.command()
def migrate() -> None:
    """Bring the database schema to the newest migration."""
    from store.db import migrate as do_migrate  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    do_migrate(settings)
    _say("contextq migrate: database schema is up to date")


@app.command(context_settings=PASSTHROUGH)
def api(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8000,
    workers: Annotated[
        int | None,
        typer.Option(help="API processes (default: API_WORKERS, else the number of cores)."),
    ] = None,
) -> None:
    """The HTTP API (uvicorn). Extra arguments go to uvicorn."""
    from cli.launcher.argv import api_argv  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    count = workers or get_settings().API_WORKERS or _cores()
    _exec(api_argv(host, port, list(ctx.args), workers=count))


@app.command(context_settings=PASSTHROUGH)
def worker(
    ctx: typer.Context,
    concurrency: Annotated[
        int | None, typer.Option(help="Worker processes (default: number of cores).")
    ] = None,
    queues: Annotated[str, typer.Option(help="Queues to consume.")] = "files,history",
    loglevel: Annotated[str | None, typer.Option(help="Log level (default: LOG_LEVEL).")] = None,
) -> None:
    """A Celery worker (prefork). Extra arguments go to `celery worker`."""
    from cli.launcher.argv import worker_argv  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    argv = worker_argv(
        concurrency or _cores(),
        queues=queues,
        quiet=settings.LOG_FORMAT == "json",
        extra=list(ctx.args),
    )
    _exec(argv, _log_level_env(loglevel))


@app.command(context_settings=PASSTHROUGH)
def beat(
    ctx: typer.Context,
    schedule: Annotated[
        Path | None, typer.Option(help="Schedule file (default: DATA_DIR/celerybeat-schedule).")
    ] = None,
    pidfile: Annotated[
        Path | None,
        typer.Option(
            help="Pid file; a second beat refuses to start (default: DATA_DIR/celerybeat.pid)."
        ),
    ] = None,
    loglevel: Annotated[str | None, typer.Option(help="Log level (default: LOG_LEVEL).")] = None,
) -> None:
    """Celery beat: the recovery and compaction sweeps. Run exactly one."""
    from cli.launcher.argv import beat_argv  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from cli.launcher.devkey import ensure_data_dir  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    data_dir = ensure_data_dir(settings)
    argv = beat_argv(
        schedule or data_dir / "celerybeat-schedule",
        pidfile or data_dir / "celerybeat.pid",
        quiet=settings.LOG_FORMAT == "json",
        extra=list(ctx.args),
    )
    _exec(argv, _log_level_env(loglevel))


@app.command(context_settings=PASSTHROUGH)
def flower(
    ctx: typer.Context,
    address: Annotated[str, typer.Option(help="Bind address (keep it private).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 5555,
) -> None:
    """Flower with basic auth (FLOWER_USER / FLOWER_PASSWORD, else a saved generated one)."""
    from cli.launcher.argv import flower_argv  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from cli.launcher.devkey import flower_env  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from contextq.secret_files import FLOWER_PASSWORD_FILE  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    env = flower_env(settings)
    if not settings.FLOWER_PASSWORD:
        _say(
            f"contextq flower: user {settings.FLOWER_USER}, password in "
            f"{settings.data_dir / FLOWER_PASSWORD_FILE}"
        )
    _exec(flower_argv(address, port, list(ctx.args)), env)


@app.command()
def health(
    part: Annotated[str, typer.Argument(help="api, worker, flower or broker.")],
    url: Annotated[
        str | None,
        typer.Option(
            help="api: base URL (http://127.0.0.1:8000); flower: base URL (http://127.0.0.1:5555)."
        ),
    ] = None,
    node: Annotated[
        str | None, typer.Option(help="worker: node name to ping (default: celery@<this host>).")
    ] = None,
) -> None:
    """Exit 0 when the part answers (used by docker-compose healthchecks)."""
    from cli.launcher import probes  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    ok: bool
    if part == "api":
        ok = probes.api_ready(url or "http://127.0.0.1:8000")
    elif part == "flower":
        ok = (
            probes.http_status((url or "http://127.0.0.1:5555").rstrip("/") + "/healthcheck") == 200
        )
    elif part in ("worker", "broker"):
        if not settings.REDIS_URL:
            _say("contextq health: REDIS_URL is not set")
            raise typer.Exit(1)
        if part == "broker":
            ok = probes.redis_ready(settings.REDIS_URL)
        else:
            ok = probes.worker_ping(
                settings.REDIS_URL, [node or f"celery@{socket.gethostname()}"], timeout=3.0
            )
    else:
        _say("contextq health: PART must be api, worker, flower or broker")
        raise typer.Exit(2)
    if not ok:
        _say(f"contextq health: {part} is not answering")
    raise typer.Exit(0 if ok else 1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
