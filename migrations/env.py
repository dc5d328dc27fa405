"""Alembic environment: the URL comes from settings (store.db.migrate sets it)."""

from __future__ import annotations

import importlib

from alembic import context
from sqlmodel import SQLModel

from store.db import make_engine

importlib.import_module("store.tables")
importlib.import_module("store.history_tables")
importlib.import_module("store.project_tables")

target_metadata = SQLModel.metadata
config = context.config


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as connection:
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
