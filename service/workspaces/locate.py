"""Where a workspace lives and whose it is (`owned_conversation`: the one ownership check
of a conversation, used by every history and workspace use case).

`DATA_DIR/workspaces/<owner_id>/<conversation_id>/` is the directory a sandbox mounts at
`/workspace`. Beside the owners' directories sit `_private-data` (the conversation and
memory checkpoints, never mounted) and `_trash` (workspaces being deleted): names no
owner id can take (`contextq.workspace.paths.check_id` refuses a leading `_`), and no
workspace path can reach (every path is checked to stay inside its own workspace).
"""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session

from contextq.errors import NotFound, ValidationFailed
from contextq.settings import Settings
from contextq.workspace import WorkspaceTree, normalize_path, workspace_root
from store import history_queries as hq
from store import workspace_queries as q
from store.history_tables import Conversation
from store.workspace_tables import WorkspaceEntry

PRIVATE_DATA_DIR = "_private-data"
TRASH_DIR = "_trash"
CONVERSATION_NOT_FOUND = "conversation not found"


def tree_for(settings: Settings, owner_id: str, conversation_id: str) -> WorkspaceTree:
    root = workspace_root(settings.workspaces_dir, owner_id, conversation_id)
    return WorkspaceTree(root, fsync=settings.blob_fsync)


def trash_dir(settings: Settings) -> Path:
    return settings.workspaces_dir / TRASH_DIR


def owned_conversation(
    session: Session, *, owner_id: str, conversation_id: str, for_update: bool = False
) -> Conversation:
    """The owner's conversation, else NotFound (another owner's looks exactly missing)."""
    conversation = hq.get_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=for_update
    )
    if conversation is None:
        raise NotFound(CONVERSATION_NOT_FOUND)
    return conversation


def missing_entry(
    session: Session, tree: WorkspaceTree, *, conversation_id: str, relative: str
) -> Exception:
    """The error for a path with no entry: 422 when it names a directory, else 404."""
    if tree.kind(relative) == "dir" or q.has_entries_under(
        session, conversation_id=conversation_id, directory=relative
    ):
        return ValidationFailed(
            f"`{relative}` is a directory; list it with GET …/workspace?prefix={relative}/",
            field="path",
        )
    return NotFound(f"no file at `{relative}` in this workspace")


def existing_entry(
    session: Session,
    settings: Settings,
    *,
    owner_id: str,
    conversation_id: str,
    path: str,
    for_update: bool = False,
) -> tuple[WorkspaceEntry, WorkspaceTree]:
    """The entry at `path` in the owner's conversation's workspace and the workspace's
    tree; NotFound for another owner's conversation or no file, 422 for a directory or a
    path refused by `normalize_path`."""
    owned_conversation(
        session, owner_id=owner_id, conversation_id=conversation_id, for_update=for_update
    )
    relative = normalize_path(path)
    tree = tree_for(settings, owner_id, conversation_id)
    entry = q.get_entry(session, conversation_id=conversation_id, path=relative)
    if entry is None:
        raise missing_entry(session, tree, conversation_id=conversation_id, relative=relative)
    return entry, tree
