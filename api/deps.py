"""Request dependencies: a database session and the authenticated owner."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlmodel import Session

from contextq.settings import Settings, get_settings
from store.db import read_session, session_scope
from store.keys import owner_for_key


def get_session() -> Iterator[Session]:
    """A write-capable transaction committed after the route returns."""
    with session_scope() as session:
        yield session


def get_read_session() -> Iterator[Session]:
    with read_session() as session:
        yield session


def get_owner_id(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise HTTPException(
            401, "missing API key: send `Authorization: Bearer <key>` (create one with "
            "`contextq keys create`)", headers={"WWW-Authenticate": "Bearer"},
        )
    with read_session() as session:
        owner_id = owner_for_key(session, key.strip())
    if owner_id is None:
        raise HTTPException(401, "invalid API key", headers={"WWW-Authenticate": "Bearer"})
    return owner_id


SessionDep = Annotated[Session, Depends(get_session)]
ReadSessionDep = Annotated[Session, Depends(get_read_session)]
OwnerDep = Annotated[str, Depends(get_owner_id)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
