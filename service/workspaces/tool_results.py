"""Large tool results written to the workspace at insert (SPEC §9).

A tool message over TOOL_RESULT_OFFLOAD_TOKENS is kept whole in the database and also
written to `/workspace/tool-results/<message_id>.<ext>` as a workspace file (a File
the worker processes, so its preview is ready for the context). The write happens once
the append has committed, in transactions of its own: it never holds the append's.
A write that fails (disk full, over the storage quota) is logged; the message is stored
all the same.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy import event
from sqlmodel import Session

from contextq.history import Message
from contextq.settings import Settings
from contextq.workspace.tool_results import tool_result_extension, tool_result_path
from service.workspaces.entries import EntryView, put_entry
from service.workspaces.locate import tree_for
from store.blobs import get_blob_store
from store.db import session_scope

log = logging.getLogger("contextq.workspaces")


def offload_after_commit(
    session: Session,
    *,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    messages: Sequence[Message],
) -> int:
    """Register the workspace writes of the large tool results among `messages`, to run
    once `session` commits. Returns how many there are."""
    large = [
        (m.id, m.text())
        for m in messages
        if m.role == "tool" and m.id and (m.token_count or 0) > settings.TOOL_RESULT_OFFLOAD_TOKENS
    ]
    if not large:
        return 0

    def _write_all(_session: Session) -> None:
        for message_id, text in large:
            try:
                write_tool_result(
                    settings=settings,
                    owner_id=owner_id,
                    conversation_id=conversation_id,
                    message_id=message_id,
                    text=text,
                )
            except Exception:
                log.exception("tool result of message %s not written to the workspace", message_id)

    event.listen(session, "after_commit", _write_all, once=True)
    return len(large)


def write_tool_result(
    *, settings: Settings, owner_id: str, conversation_id: str, message_id: str, text: str
) -> EntryView:
    """Write one tool result to its workspace path (its own transaction)."""
    data = text.encode("utf-8", "surrogatepass")
    relative = tool_result_path(message_id, tool_result_extension(text))
    staged = tree_for(settings, owner_id, conversation_id).stage(relative)
    blob = get_blob_store(settings).writer()
    try:
        staged.write(data)
        blob.write(data)
        with session_scope() as session:
            return put_entry(
                session=session,
                settings=settings,
                owner_id=owner_id,
                conversation_id=conversation_id,
                relative=relative,
                blob=blob,
                staged=staged,
            )
    finally:
        blob.abort()
        staged.abort()
