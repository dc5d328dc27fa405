"""API keys: generated once, shown once, stored only as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import secrets

from sqlmodel import Session, select

from store.tables import ApiKey, Owner

KEY_PREFIX = "cq_"


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
    session.add(ApiKey(owner_id=owner.id, key_hash=hash_key(key), prefix=key[:10]))
    session.flush()
    return key


def owner_for_key(session: Session, key: str) -> str | None:
    """The owner id of a valid, unrevoked key, else None."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    row = session.exec(
        select(ApiKey).where(ApiKey.key_hash == hash_key(key), ApiKey.revoked_at.is_(None))  # type: ignore[union-attr]
    ).first()
    return row.owner_id if row else None
