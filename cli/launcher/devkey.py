"""DATA_DIR and the secrets `contextq up` keeps there: the development API key and
Flower's password (both created on first start and reused after)."""

from __future__ import annotations

from pathlib import Path

from contextq.secret_files import (
    DEV_KEY_FILE,
    FLOWER_PASSWORD_FILE,
    read_secret,
    secret_once,
    write_secret,
)
from contextq.settings import Settings


def ensure_data_dir(settings: Settings) -> Path:
    data_dir = settings.data_dir
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return data_dir


def flower_password(settings: Settings) -> str:
    if settings.FLOWER_PASSWORD:
        return settings.FLOWER_PASSWORD
    return secret_once(ensure_data_dir(settings) / FLOWER_PASSWORD_FILE)


def flower_env(settings: Settings) -> dict[str, str]:
    return {"FLOWER_BASIC_AUTH": f"{settings.FLOWER_USER}:{flower_password(settings)}"}


def dev_api_key(settings: Settings) -> str:
    """The development key saved in DATA_DIR, created on first start and reused after.

    The database stores only a hash, so the plaintext lives in DATA_DIR/dev-api-key
    (mode 0600). A saved key the database no longer knows is replaced.
    """
    from store.db import session_scope  # noqa: PLC0415 - SQLAlchemy, once the stack starts
    from store.keys import create_key, owner_for_key  # noqa: PLC0415

    path = ensure_data_dir(settings) / DEV_KEY_FILE
    saved = read_secret(path)
    with session_scope() as session:
        if saved and owner_for_key(session, saved):
            return saved
        key = create_key(session, owner_name="dev")
    write_secret(path, key)
    return key
