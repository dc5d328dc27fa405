"""Deleting a conversation deletes its workspace: entries, their Files, the directory."""

from __future__ import annotations

import logging

from sqlalchemy import event
from sqlmodel import Session

from contextq.settings import Settings
from service import files
from service.workspaces.locate import trash_dir, tree_for
from store import workspace_queries as q

log = logging.getLogger("contextq.workspaces")


def remove_workspace(
    *, session: Session, settings: Settings, owner_id: str, conversation_id: str
) -> int:
    """Delete the workspace's entries and Files in this transaction; once it commits,
    the directory goes (moved aside first, so a sandbox still writing cannot refill it).
    Returns the number of entries removed."""
    entries = q.entries_of_conversation(session, conversation_id=conversation_id)
    file_ids = [e.file_id for e in entries if e.file_id is not None]
    q.delete_entries(session, conversation_id=conversation_id)
    for file_id in file_ids:
        files.delete_file(session=session, settings=settings, owner_id=owner_id, file_id=file_id)
    tree = tree_for(settings, owner_id, conversation_id)

    def _remove_directory(_session: Session) -> None:
        try:
            tree.remove_tree(trash_dir(settings))
        except OSError:
            log.exception("workspace %s could not be removed from disk", conversation_id)

    event.listen(session, "after_commit", _remove_directory, once=True)
    return len(entries)
