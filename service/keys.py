"""API keys (docs/cli.md, docs/operations.md#running-the-service): list them, revoke one by its
prefix.

A revocation is committed in the database first, then announced through the broker
(`store.keys.announce_revocation`), which every API process checks a few times a
second: the key answers 401 everywhere within a second. Without a reachable broker
the revocation still holds for new lookups at once, and for keys an API process had
cached within AUTH_CACHE_TTL_S (10 s).
"""

from __future__ import annotations

import logging

from sqlmodel import Session

from contextq.errors import Conflict, NotFound, ValidationFailed
from store import keys as q
from store.tables import utcnow

log = logging.getLogger("contextq.keys")

MIN_PREFIX_CHARS = 6


def list_keys(*, session: Session, include_revoked: bool = False) -> list[q.KeyInfo]:
    return q.list_keys(session, include_revoked=include_revoked)


def revoke_key(*, session: Session, prefix: str) -> str:
    """Revoke the one active key whose prefix (as `keys list` shows it) starts with
    `prefix`; returns its prefix. NotFound or Conflict (ambiguous) otherwise."""
    prefix = prefix.strip()
    if len(prefix) < MIN_PREFIX_CHARS:
        raise ValidationFailed(
            f"give at least {MIN_PREFIX_CHARS} characters of the prefix `contextq keys list` shows",
            field="prefix",
        )
    matches = q.active_keys_with_prefix(session, prefix[: q.PREFIX_CHARS])
    if not matches:
        raise NotFound(f"no active key has the prefix {prefix!r} (see `contextq keys list`)")
    if len(matches) > 1:
        raise Conflict(f"{len(matches)} active keys start with {prefix!r}: give more of the prefix")
    (key,) = matches
    key.revoked_at = utcnow()
    session.add(key)
    return key.prefix


def announce_revocation(*, redis_url: str | None) -> bool:
    """After the revocation committed: tell the API processes. False when the broker
    cannot be reached (cached keys then expire within AUTH_CACHE_TTL_S)."""
    if not redis_url:
        return False
    try:
        q.announce_revocation(redis_url)
    except Exception as exc:
        log.warning("could not announce the revocation through the broker: %s", exc)
        return False
    return True
