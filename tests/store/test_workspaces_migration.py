"""Migration 0006_workspaces on SQLite and PostgreSQL: down and up again, and the
foreign keys act (a deleted File leaves its entry with file_id NULL; a deleted
conversation takes its entries)."""

from __future__ import annotations

from alembic import command
from sqlalchemy import inspect, text

from store.db import get_engine, reset_engine
from tests.store.test_projects_migration import BOTH_BACKENDS, alembic_config


def tables() -> set[str]:
    reset_engine()
    return set(inspect(get_engine()).get_table_names())


@BOTH_BACKENDS
def test_down_and_up_again(stack) -> None:
    assert "workspace_entries" in tables()
    cfg = alembic_config()
    command.downgrade(cfg, "0004_projects_chunks")
    assert "workspace_entries" not in tables()
    command.upgrade(cfg, "head")
    assert "workspace_entries" in tables()


@BOTH_BACKENDS
def test_foreign_keys_act(stack, owner) -> None:
    engine = get_engine()
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO conversations (id, owner_id, replace_system_prompt, message_count,"
                " total_tokens, last_seq, pinned_count, last_compacted_seq,"
                " tokens_since_compaction, created_at, updated_at)"
                " VALUES ('c1', :o, false, 0, 0, 0, 0, 0, 0, CURRENT_TIMESTAMP,"
                " CURRENT_TIMESTAMP)"
            ),
            {"o": owner.owner_id},
        )
        conn.execute(
            text(
                "INSERT INTO files (id, owner_id, filename, size_bytes, sha256, media_type,"
                " file_type, category, status, attempts, cache_hit, enqueues, created_at,"
                " updated_at) VALUES ('f1', :o, 'a.txt', 1, 'x', 'text/plain', 'text', 'text',"
                " 'uploaded', 0, false, 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"o": owner.owner_id},
        )
        conn.execute(
            text(
                "INSERT INTO workspace_entries (id, owner_id, conversation_id, path, file_id,"
                " size_bytes, sha256, created_at, updated_at) VALUES ('e1', :o, 'c1', 'a.txt',"
                " 'f1', 1, 'x', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            ),
            {"o": owner.owner_id},
        )
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM files WHERE id = 'f1'"))
        assert conn.execute(text("SELECT file_id FROM workspace_entries")).all() == [(None,)]
        conn.execute(text("DELETE FROM conversations WHERE id = 'c1'"))
        assert conn.execute(text("SELECT count(*) FROM workspace_entries")).scalar_one() == 0
