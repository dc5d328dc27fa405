"""Migration 0004_projects_chunks on SQLite and PostgreSQL: the models match it, it goes down
and up again, and autogenerate leaves the unmapped full-text index alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import inspect

from contextq.settings import get_settings
from store.db import get_engine, normalise_url, reset_engine

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
PROJECT_TABLES = {"projects", "chunk_sets", "chunks", "file_chunk_sets"}


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parents[2] / "migrations"))
    url = normalise_url(get_settings().database_url)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def tables() -> set[str]:
    reset_engine()
    return set(inspect(get_engine()).get_table_names())


@BOTH_BACKENDS
def test_models_match_the_migrations(stack) -> None:
    command.check(alembic_config())  # raises when autogenerate would emit anything


@BOTH_BACKENDS
def test_down_and_up_again(stack) -> None:
    dialect = get_engine().dialect.name
    assert tables() >= PROJECT_TABLES
    if dialect == "sqlite":
        assert "chunks_fts" in tables()
    else:
        columns = {c["name"] for c in inspect(get_engine()).get_columns("chunks")}
        assert "tsv" in columns
    cfg = alembic_config()
    command.downgrade(cfg, "0002")
    assert not (PROJECT_TABLES | {"chunks_fts"}) & tables()
    command.upgrade(cfg, "head")
    assert tables() >= PROJECT_TABLES


_STORAGE_SQL = (
    "SELECT attstorage FROM pg_attribute WHERE attrelid = 'chunks'::regclass "
    "AND attname = 'embedding'"
)


@pytest.mark.postgres
@pytest.mark.parametrize("stack", ["postgres"], indirect=True)
def test_0015_bounds_the_gin_pending_list_and_stores_vectors_uncompressed(stack) -> None:
    from sqlalchemy import text

    _STORAGE = text(_STORAGE_SQL)

    def settings() -> tuple[list[str] | None, str]:
        reset_engine()
        with get_engine().connect() as c:
            options = c.execute(
                text("SELECT reloptions FROM pg_class WHERE relname = 'ix_chunks_tsv'")
            ).scalar_one()
            storage = c.execute(_STORAGE).scalar_one()
        return options, storage

    assert settings() == (["gin_pending_list_limit=256"], "e")  # e: external
    cfg = alembic_config()
    command.downgrade(cfg, "0014_chunk_embeddings")
    assert settings() == (None, "x")  # x: extended (compressed when it pays)
    command.upgrade(cfg, "head")
    assert settings() == (["gin_pending_list_limit=256"], "e")
