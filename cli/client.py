"""What the CLI's client commands share: the target (`--api`/`--key`, the env, the URL
and dev key `contextq up` saved), a `contextq.Client` on it, and the renderings of
`upload`, `context` and `events`. Every HTTP call goes through the SDK (`contextq_client`,
the thin client)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from contextq.history.types import FormatName
from contextq.secret_files import API_URL_FILE, DEV_KEY_FILE, read_secret
from contextq.settings import Settings
from contextq_client import Client, ContextqError

DEFAULT_API_URL = "http://127.0.0.1:8000"
DONE = ("ready", "failed")


class ClientError(Exception):
    """A message for the user; the CLI prints it and exits 1."""


@dataclass(frozen=True)
class Target:
    api: str
    key: str


def resolve_target(api: str | None, key: str | None, settings: Settings) -> Target:
    """--api/--key, else CONTEXTQ_API_URL/CONTEXTQ_API_KEY, else the URL and the dev key
    `contextq up` saved in DATA_DIR (else http://127.0.0.1:8000)."""
    api = (
        api
        or os.environ.get("CONTEXTQ_API_URL")
        or read_secret(settings.data_dir / API_URL_FILE)
        or DEFAULT_API_URL
    )
    key = key or os.environ.get("CONTEXTQ_API_KEY")
    if not key:
        key = read_secret(settings.data_dir / DEV_KEY_FILE)
    if not key:
        raise ClientError(
            "no API key: pass --key, set CONTEXTQ_API_KEY, or run `contextq up` in this "
            f"directory first (it saves a development key in {settings.data_dir / DEV_KEY_FILE})"
        )
    return Target(api.rstrip("/"), key)


def sdk_client(target: Target, timeout: float = 60.0) -> Client:
    return Client(target.api, api_key=target.key, timeout=timeout)


def connect(api: str | None, key: str | None, settings: Settings) -> Client:
    """A `Client` on the target the options, the env or the dev key name."""
    return sdk_client(resolve_target(api, key, settings))


# -- upload ------------------------------------------------------------------------------


def upload(
    target: Target,
    paths: Sequence[Path],
    *,
    conversation_id: str | None = None,
    project_id: str | None = None,
    poll_wait_s: float = 0.5,
    timeout_s: float = 900.0,
    console: Console | None = None,
) -> int:
    """Upload every file, wait until each is ready or failed, print a table; exit code."""
    console = console or Console()
    rows: dict[Path, dict[str, Any]] = {}
    with sdk_client(target) as client:
        progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        with progress:
            tasks = {p: progress.add_task(p.name, total=2, status="uploading") for p in paths}
            for path in paths:
                rows[path] = _upload_one(client, path, conversation_id, project_id)
                progress.update(tasks[path], completed=1, status=rows[path].get("status", "?"))
            _wait_all(client, paths, rows, progress, tasks, poll_wait_s, timeout_s)
    console.print(files_table(paths, rows))
    return 0 if all(rows[p].get("status") == "ready" for p in paths) else 1


def _wait_all(  # noqa: PLR0917  (the upload loop's state, passed once)
    client: Client,
    paths: Sequence[Path],
    rows: dict[Path, dict[str, Any]],
    progress: Progress,
    tasks: dict[Path, Any],
    poll_wait_s: float,
    timeout_s: float,
) -> None:
    """Long-poll each unfinished file in turn until all are ready or failed."""
    deadline = time.monotonic() + timeout_s
    pending = [p for p in paths if rows[p].get("status") not in DONE]
    while pending:
        if time.monotonic() > deadline:
            for p in pending:
                rows[p]["error"] = f"still {rows[p].get('status')} after {timeout_s:.0f}s"
            break
        for p in pending:
            try:
                rows[p] = client.files.get(rows[p]["id"], wait=poll_wait_s).model_dump(mode="json")
            except ContextqError as exc:
                rows[p] = {**rows[p], "status": "failed", "error": str(exc)}
            progress.update(tasks[p], status=rows[p].get("status", "?"))
        pending = [p for p in pending if rows[p].get("status") not in DONE]
    for p in paths:
        if rows[p].get("status") in DONE:
            progress.update(tasks[p], completed=2)


def _upload_one(
    client: Client, path: Path, conversation_id: str | None, project_id: str | None
) -> dict[str, Any]:
    try:
        uploaded = client.files.upload(path, conversation_id=conversation_id, project_id=project_id)
    except OSError as exc:
        return {"status": "failed", "error": f"cannot read {path}: {exc.strerror or exc}"}
    except ContextqError as exc:
        return {"status": "failed", "error": str(exc)}
    return uploaded.model_dump(mode="json")


def files_table(paths: Sequence[Path], rows: dict[Path, dict[str, Any]]) -> Table:
    """One row per file, named by its file name (a parent directory added only where two
    share a name); narrow enough for an 80-column terminal (tokens before → after in one
    column, the error or the truncation summary folded into the last)."""
    table = Table(title="contextq upload", title_justify="left", pad_edge=False)
    table.add_column("file", overflow="fold", ratio=3)
    table.add_column("status", no_wrap=True)
    table.add_column("category", no_wrap=True)
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold", ratio=4)
    for p, name in zip(paths, display_names(paths), strict=True):
        row = rows[p]
        status = str(row.get("status", "?"))
        style = {"ready": "green", "failed": "red"}.get(status, "yellow")
        table.add_row(
            name,
            f"[{style}]{status}[/{style}]",
            str(row.get("category") or ""),
            _tokens(row.get("token_count"), row.get("processed_token_count")),
            str(row.get("error") or _truncation(row.get("truncation"))),
        )
    return table


def display_names(paths: Sequence[Path]) -> list[str]:
    """Each path's file name, or as many trailing parts as tell it from the others."""
    names = []
    for path in paths:
        parts = path.parts
        depth = 1
        while depth < len(parts) and any(
            other != path and other.parts[-depth:] == parts[-depth:] for other in paths
        ):
            depth += 1
        names.append("/".join(parts[-depth:]))
    return names


def _tokens(original: Any, processed: Any) -> str:
    if original is None:
        return ""
    if processed is None or processed == original:
        return f"{original:,}"
    return f"{original:,} → {processed:,}"


def _truncation(truncation: Any) -> str:
    if not isinstance(truncation, dict):
        return ""
    summary = truncation.get("summary")
    if summary:
        return str(summary)
    return "truncated" if truncation.get("truncated") else ""


def _num(value: Any) -> str:
    return "" if value is None else str(value)


# -- context report ---------------------------------------------------------------------


def fetch_context(
    target: Target,
    conversation_id: str,
    *,
    strategy: str | None = None,
    options: str | None = None,
    model: str | None = None,
    fmt: str | None = None,
    force_filter: bool = False,
) -> dict[str, Any]:
    parsed: dict[str, Any] | None = None
    if options:
        try:
            parsed = json.loads(options)
        except ValueError as exc:
            raise ClientError(f"--options is not valid JSON: {exc}") from exc
        if not isinstance(parsed, dict):
            raise ClientError("--options must be a JSON object")
    with sdk_client(target) as client:
        try:
            context = client.context.get(
                conversation_id,
                model=model,
                format=cast("FormatName | None", fmt),  # checked by the command
                strategy=strategy,
                options=parsed,
                force_filter=force_filter or None,
            )
        except ContextqError as exc:
            raise ClientError(str(exc)) from exc
    return context.model_dump(mode="json")


def context_report(ctx: dict[str, Any]) -> list[tuple[str, str]]:
    """The filtering report as (label, value) rows."""
    messages = ctx.get("messages") or []
    removed = list(ctx.get("removed_message_ids") or [])
    kept = ctx.get("kept_message_count")
    original = ctx.get("original_message_count")
    if original is None:
        # history messages sent + removed; the synthetic system prompt (and the
        # summary of a compaction) are not history messages
        # (a format that sends the system prompt outside its list has no system first)
        synthetic = 1 if messages and messages[0].get("role") == "system" else 0
        original = max(0, len(messages) - synthetic) + len(removed)
        if kept is None:
            kept = max(0, len(messages) - synthetic)
    elif kept is None:
        kept = original - len(removed)
    limit = ctx.get("context_limit")
    before = ctx.get("original_tokens")
    if before is None and ctx.get("usage_before") is not None and limit:
        before = round(float(ctx["usage_before"]) * int(limit))
    after = ctx.get("token_count")
    rows = [
        ("conversation", str(ctx.get("conversation_id", ""))),
        (
            "model",
            f"{ctx.get('model', '')} (context limit {limit}, budget {ctx.get('budget_tokens')})",
        ),
        (
            "strategy",
            f"{ctx.get('strategy', '')} (filtered: {'yes' if ctx.get('filtered') else 'no'})",
        ),
        ("messages", f"{original} → {kept}"),
        ("removed ids", ", ".join(removed) if removed else "none"),
        ("tokens", f"{_num(before)} → {_num(after)}"),
        ("usage", f"{_pct(ctx.get('usage_before'))} → {_pct(ctx.get('usage_after'))}"),
        ("duration", f"{ctx.get('duration_ms')} ms"),
    ]
    if ctx.get("compaction_id"):
        rows.append(("compaction", str(ctx["compaction_id"])))
    breakdown = ctx.get("token_breakdown") or {}
    if breakdown:
        spent = ", ".join(f"{k} {_num(v)}" for k, v in breakdown.items() if v)
        rows.append(("where the tokens went", spent or "nothing"))
    dropped = {k: v for k, v in (ctx.get("reasoning_dropped") or {}).items() if v}
    # reasoning blocks, items or parts left out, by why (docs/context.md#reasoning-state)
    if dropped:
        rows.append(("reasoning left out", ", ".join(f"{k} {v}" for k, v in dropped.items())))
    for note in ctx.get("file_notes") or ():
        rows.append((f"file {note.get('file_id')}", str(note.get("reason", ""))))
    for warning in ctx.get("warnings") or ():
        rows.append(("warning", str(warning)))
    return rows


def _pct(value: Any) -> str:
    return "?" if value is None else f"{float(value) * 100:.1f}%"


def print_context_report(ctx: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title="contextq context", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    for label, value in context_report(ctx):
        table.add_row(label, value)
    console.print(table)


def event_line(event: dict[str, Any]) -> str:
    """`<id> <timestamp> <type> <data as JSON>`: one line per event."""
    data = json.dumps(event.get("data"), ensure_ascii=False, separators=(",", ":"))
    return f"{event['id']} {event.get('timestamp', '')} {event.get('type', '')} {data}"
