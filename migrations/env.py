"""Alembic environment: the URL comes from settings (store.db.migrate sets it)."""

from __future__ import annotations

import importlib

from alembic import context
from sqlmodel import SQLModel

from store.db import make_engine

importlib.import_module("store.tables")
importlib.import_module("store.history_tables")
importlib.import_module("store.project_tables")
importlib.import_module("store.workspace_tables")
importlib.import_module("store.event_tables")
importlib.import_module("store.context_tables")

target_metadata = SQLModel.metadata
config = context.config

# The full-text index of chunks is SQL of its dialect (0004_projects_chunks), not mapped:
# SQLite's FTS5 table and its shadow tables, PostgreSQL's generated tsvector and its index.
_UNMAPPED = {("column", "tsv"), ("index", "ix_chunks_tsv")}


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    if type_ == "table" and name is not None and name.startswith("chunks_fts"):
        return False
    return (type_, name) not in _UNMAPPED


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,
            include_object=include_object,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
