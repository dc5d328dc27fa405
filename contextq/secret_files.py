"""Secrets kept as files in DATA_DIR (mode 0600): the dev key, Flower's and Valkey's
passwords, and beside the key the API's URL `contextq up` printed.

Stdlib only: the CLI's client commands read the development key and the URL `contextq up`
saved without importing the launcher.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

DEV_KEY_FILE = "dev-api-key"
# the API's URL of the newest `contextq up` on this DATA_DIR (kept after it stops, like the
# key: a client command then names where the stack was, not a default port)
API_URL_FILE = "api-url"
FLOWER_PASSWORD_FILE = "flower-password"  # noqa: S105  (a file name, not a secret)
VALKEY_PASSWORD_FILE = "valkey-password"  # noqa: S105
# the embedded broker's URL while `contextq up` runs (its port is picked at each start), so
# `contextq keys revoke` can reach it without REDIS_URL
BROKER_URL_FILE = "broker-url"


def write_secret(path: Path, value: str) -> None:
    """Write `value` to `path` with mode 0600 (atomically, never readable by others)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(value + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_secret(path: Path) -> str | None:
    """The secret saved at `path` (its mode tightened to 0600), or None."""
    try:
        value = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if value:
        os.chmod(path, 0o600)
    return value or None


def secret_once(path: Path) -> str:
    """The secret saved at `path`, generated (and saved with mode 0600) on first use."""
    value = read_secret(path)
    if value is None:
        value = secrets.token_urlsafe(24)  # no ':' or ',' (Flower splits on both)
        write_secret(path, value)
    return value
