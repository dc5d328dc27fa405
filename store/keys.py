"""API keys: generated once, shown once, stored only as a SHA-256 hash.

Revocation reaches every API process through the broker: `announce_revocation` bumps
the counter `contextq:auth:generation`; each API process reads it a few times a second
and drops what its auth cache remembered before the change (`api.deps`).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, update
from sqlmodel import Session, col, select

from store.redis_clients import redis_client
from store.tables import ApiKey, Owner, utcnow

KEY_PREFIX = "cq_"
PREFIX_CHARS = 10  # what `keys list` shows and `keys revoke` takes: "cq_" + 7 characters
AUTH_GENERATION_KEY = "contextq:auth:generation"
LAST_USED_EVERY_S = 60.0


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def create_key(session: Session, *, owner_name: str) -> str:
    """Create (or reuse) the owner and a new key for it; returns the plaintext key."""
    owner = session.exec(select(Owner).where(Owner.name == owner_name)).first()
    if owner is None:
        owner = Owner(name=owner_name)
        session.add(owner)
        session.flush()
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiKey(owner_id=owner.id, key_hash=hash_key(key), prefix=key[:PREFIX_CHARS]))
    session.flush()
    return key


@dataclass(frozen=True)
class KeyOwner:
    owner_id: str
    key_id: str
    last_used_at: datetime | None


def lookup_key(session: Session, key: str) -> KeyOwner | None:
    """The owner of a valid, unrevoked key, else None."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    row = session.exec(
        select(ApiKey).where(ApiKey.key_hash == hash_key(key), col(ApiKey.revoked_at).is_(None))
    ).first()
    return KeyOwner(row.owner_id, row.id, row.last_used_at) if row else None


def owner_for_key(session: Session, key: str) -> str | None:
    """The owner id of a valid, unrevoked key, else None."""
    found = lookup_key(session, key)
    return found.owner_id if found else None


def note_used(session: Session, *, key_id: str, now: datetime | None = None) -> bool:
    """Record a use, unless one was recorded in the last minute (a conditional UPDATE:
    several API processes noting the same key change the row once)."""
    now = now or utcnow()
    result = session.execute(
        update(ApiKey)
        .where(
            col(ApiKey.id) == key_id,
            or_(
                col(ApiKey.last_used_at).is_(None),
                col(ApiKey.last_used_at) < now - timedelta(seconds=LAST_USED_EVERY_S),
            ),
        )
        .values(last_used_at=now)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class KeyInfo:
    prefix: str
    owner: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


def list_keys(session: Session, *, include_revoked: bool = False) -> list[KeyInfo]:
    stmt = select(ApiKey, Owner.name).join(Owner, col(Owner.id) == col(ApiKey.owner_id))
    if not include_revoked:
        stmt = stmt.where(col(ApiKey.revoked_at).is_(None))
    rows = session.exec(stmt.order_by(col(ApiKey.created_at), col(ApiKey.id))).all()
    return [KeyInfo(k.prefix, name, k.created_at, k.last_used_at, k.revoked_at) for k, name in rows]


def active_keys_with_prefix(session: Session, prefix: str) -> list[ApiKey]:
    return list(
        session.exec(
            select(ApiKey).where(
                col(ApiKey.prefix).startswith(prefix, autoescape=True),
                col(ApiKey.revoked_at).is_(None),
            )
        ).all()
    )


def auth_generation(url: str) -> int:
    raw = redis_client(url, timeout_s=1.0).get(AUTH_GENERATION_KEY)
    return int(raw or 0)


def announce_revocation(url: str) -> int:
    """Tell every API process that keys were revoked; returns the new generation."""
    return int(redis_client(url, timeout_s=2.0).incr(AUTH_GENERATION_KEY))
