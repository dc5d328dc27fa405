"""Database helpers for tests: migrate, owners + keys, row reads (all through store/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from sqlmodel import SQLModel, select

T = TypeVar("T", bound=SQLModel)


def migrate() -> None:
    """Run the Alembic migrations against the active settings' DATABASE_URL."""
    from store.db import migrate as _migrate

    _migrate()


@dataclass(frozen=True)
class OwnerKey:
    owner_id: str
    name: str
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def create_owner(name: str) -> OwnerKey:
    """A new owner (or the existing one of that name) and a fresh API key for it."""
    from store.db import session_scope
    from store.keys import create_key, owner_for_key

    with session_scope() as session:
        key = create_key(session, owner_name=name)
        owner_id = owner_for_key(session, key)
    assert owner_id is not None
    return OwnerKey(owner_id=owner_id, name=name, key=key)


def get_row(model: type[T], row_id: Any) -> T | None:
    from store.db import read_session

    with read_session() as session:
        return session.get(model, row_id)


def all_rows(model: type[T], **where: Any) -> list[T]:
    from store.db import read_session

    with read_session() as session:
        stmt = select(model)
        for column, value in where.items():
            stmt = stmt.where(getattr(model, column) == value)
        return list(session.exec(stmt).all())
