"""Large tool results written to the workspace at insert (docs/workspaces.md#large-tool-results).

A tool message over TOOL_RESULT_OFFLOAD_TOKENS is kept whole in the database and also
written to `/workspace/tool-results/<message_id>.<ext>` as a workspace file (a File
the worker processes, so its preview is ready for the context). The write happens once
the append has committed, in transactions of its own (all of an append's together:
`write_tool_results` over `bulk.put_new_files`): it never holds the append's.
A write that fails (disk full, over the storage quota) is logged; the message is stored
all the same.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from sqlalchemy import event
from sqlmodel import Session

from contextq.history import Message
from contextq.settings import Settings
from contextq.workspace.tool_results import tool_result_extension, tool_result_path
from service.workspaces.bulk import NewFile, put_new_files
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
        (str(m.id), m.text())
        for m in messages
        if m.role == "tool" and m.id and (m.token_count or 0) > settings.TOOL_RESULT_OFFLOAD_TOKENS
    ]
    if not large:
        return 0

    def _write_all(_session: Session) -> None:
        write_tool_results(
            settings=settings,
            owner_id=owner_id,
            conversation_id=conversation_id,
            results=dict(large),
        )

    event.listen(session, "after_commit", _write_all, once=True)
    return len(large)


def write_tool_result(
    *, settings: Settings, owner_id: str, conversation_id: str, message_id: str, text: str
) -> EntryView:
    """Write one tool result to its workspace path (its own transaction)."""
    data = _encode(text)
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


def write_tool_results(
    *,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    results: Mapping[str, str],
    paths: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Write the tool results (message id → text) whose paths are not in the workspace
    yet, together (`bulk.put_new_files`); should that fail (a quota, a full disk), one by
    one, so that as many as fit are written and each that is not is named. `paths`: the
    workspace paths already known (message id → path; else found from each text).
    Returns message id → a sentence saying why it could not be written (logged)."""
    known = paths or {}
    files = [
        NewFile(known.get(key) or tool_result_path(key, tool_result_extension(text)), _encode(text))
        for key, text in results.items()
    ]
    try:
        put_new_files(
            settings=settings, owner_id=owner_id, conversation_id=conversation_id, files=files
        )
    except Exception:
        log.warning("tool results not written together; writing them one by one", exc_info=True)
    else:
        return {}
    failed: dict[str, str] = {}
    for key, file in zip(results, files, strict=True):
        try:  # a path written by a chunk that went through is left as it is
            put_new_files(
                settings=settings, owner_id=owner_id, conversation_id=conversation_id, files=[file]
            )
        except Exception as exc:
            log.exception("tool result of message %s not written to the workspace", key)
            failed[key] = f"{type(exc).__name__}: {exc}"
    return failed


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
