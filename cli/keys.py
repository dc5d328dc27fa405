"""`contextq keys create|list|revoke` (docs/cli.md, docs/operations.md#running-the-service)."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Annotated

import typer

from contextq.settings import get_settings

keys_app = typer.Typer(help="API keys.", no_args_is_help=True)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _out(message: str) -> None:
    print(message, flush=True)


@keys_app.command("create")
def keys_create(
    owner: Annotated[str, typer.Option(help="Owner name (created if new).")] = "default",
) -> None:
    """Create an API key and print it alone on stdout (shown once; only its hash is stored)."""
    from store.db import migrate, session_scope  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from store.keys import create_key  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    migrate(settings)
    with session_scope() as session:
        key = create_key(session, owner_name=owner)
    _out(key)


def _broker_url() -> str | None:
    """REDIS_URL, or the embedded broker of a running `contextq up` on this DATA_DIR."""
    from contextq.secret_files import BROKER_URL_FILE, read_secret  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    settings = get_settings()
    return settings.REDIS_URL or read_secret(settings.data_dir / BROKER_URL_FILE)


def _when(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else "never"


@keys_app.command("list")
def keys_list(
    revoked: Annotated[bool, typer.Option("--revoked", help="Show revoked keys too.")] = False,
) -> None:
    """The keys: prefix, owner, created, last used (UTC; last use is noted once a minute)."""
    from service.keys import list_keys  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from store.db import migrate, read_session  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    migrate(get_settings())
    with read_session() as session:
        keys = list_keys(session=session, include_revoked=revoked)
    columns = ["PREFIX", "OWNER", "CREATED", "LAST USED"] + (["REVOKED"] if revoked else [])
    rows = [
        [k.prefix, k.owner, _when(k.created_at), _when(k.last_used_at)]
        + ([_when(k.revoked_at) if k.revoked_at else ""] if revoked else [])
        for k in keys
    ]
    widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
    for row in [columns, *rows]:
        _out("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


@keys_app.command("revoke")
def keys_revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix, as `keys list` shows it.")],
) -> None:
    """Revoke a key: it answers 401 on every API process within a second."""
    from contextq.errors import ContextqError  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from service.keys import announce_revocation, revoke_key  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it
    from store.db import migrate, session_scope  # noqa: PLC0415 - CLI start-up: loaded by the command that runs it

    migrate(get_settings())
    try:
        with session_scope() as session:
            revoked = revoke_key(session=session, prefix=prefix)
    except ContextqError as exc:
        _say(f"contextq keys revoke: {exc}")
        raise typer.Exit(1) from None
    if announce_revocation(redis_url=_broker_url()):
        _say(f"revoked {revoked}; every API process refuses it within a second")
    else:
        _say(
            f"revoked {revoked}; the broker could not be told, so API processes that "
            "cached it refuse it within 10 s"
        )
