"""Large tool results in a context read (SPEC §9): their previews, and the workspace
copies of the results a context cleared.

A stored tool message over TOOL_RESULT_OFFLOAD_TOKENS stands in the context as the file
processors' preview for its format. The preview is the processed text of its workspace
File (`tool-results/<message id>.<ext>`, written at insert) when the worker has made it;
else the same processors run here, in memory, over the message's text. A stored message
never changes, so a preview is kept per process by message id (bounded).

A context that clears old tool results names their workspace paths; a cleared result
that is not there yet (one under the offload threshold, or whose write at insert failed)
is written after the read by a background writer thread, off the read's path, in
transactions of its own (`write_cleared`; `flush_cleared_results` waits for them).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import Session

from contextq.assembly.preview import preview_text
from contextq.assembly.tool_results import ToolResultView, result_path
from contextq.files.pipeline import process_file
from contextq.history import Message
from contextq.history.types import content_text
from contextq.lru import LRU
from contextq.settings import Settings
from contextq.tokens import DEFAULT_ENCODING
from service.background_writer import BackgroundWriter
from service.workspaces.tool_results import write_tool_result
from store import context_queries as cq
from store import workspace_queries as wq
from store.db import session_scope
from store.tables import FileStatus

log = logging.getLogger("contextq.history")
MAX_VIEWS = 2_000
MAX_WRITTEN = 200_000


VIEWS: LRU[str, ToolResultView] = LRU(MAX_VIEWS)  # message id → its view
WRITTEN: set[str] = set()  # ids of tool results known to be in their workspace


def tool_result_views(
    session: Session, settings: Settings, *, conversation_id: str, messages: Sequence[Message]
) -> dict[str, ToolResultView]:
    """The preview of every large tool result among `messages`, by message id."""
    large = [
        m
        for m in messages
        if m.role == "tool" and m.id and (m.token_count or 0) > settings.TOOL_RESULT_OFFLOAD_TOKENS
    ]
    views: dict[str, ToolResultView] = {}
    missing: list[Message] = []
    for m in large:
        found = VIEWS.get(str(m.id))
        if found is None:
            missing.append(m)
        else:
            views[str(m.id)] = found
    if missing:
        views.update(_make_views(session, settings, conversation_id, missing))
    return views


def _make_views(
    session: Session, settings: Settings, conversation_id: str, messages: list[Message]
) -> dict[str, ToolResultView]:
    paths = {str(m.id): result_path(m) for m in messages}
    entries = wq.entries_at(session, conversation_id=conversation_id, paths=list(paths.values()))
    ready = [e[1] for e in entries.values() if e[1] is not None and e[2] == FileStatus.READY]
    texts = cq.file_texts(session, file_ids=[f for f in ready if f is not None])
    out: dict[str, ToolResultView] = {}
    for m in messages:
        key = str(m.id)
        text = content_text(m.content)
        entry = entries.get(paths[key])
        processed = texts.get(entry[1]) if entry is not None and entry[1] is not None else None
        if processed is None:
            processed = _preview_in_memory(text, paths[key], settings)
        size = entry[0] if entry is not None else len(text.encode("utf-8", "surrogatepass"))
        view = ToolResultView(paths[key], size, processed)
        if entry is not None:
            _written(key)
        VIEWS.put(key, view)
        out[key] = view
    return out


def _preview_in_memory(text: str, relative: str, settings: Settings) -> str:
    """The processors' text for `text` as a file named like its workspace path; the head
    and tail of the text should they fail."""
    name = Path(relative).name
    with tempfile.TemporaryDirectory(prefix="contextq-preview-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        result = process_file(path, name, settings=settings, work_dir=Path(tmp))
    if result.success and result.content:
        return result.content
    shown, _, _ = preview_text(text, settings.MAX_TOKENS_PER_FILE, DEFAULT_ENCODING)
    return shown


def write_cleared(
    *,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    messages: Sequence[Message],
    cleared_ids: Sequence[str],
) -> int:
    """Hand each cleared tool result not known to be in the workspace to the background
    writer (off the read's path; each write in a transaction of its own). Returns how
    many were handed over."""
    by_id = {str(m.id): m for m in messages if m.id is not None}
    chosen = [by_id[i] for i in cleared_ids if i not in WRITTEN and i in by_id]
    for m in chosen:
        job = _ClearedResult(
            settings, owner_id, conversation_id, result_path(m), content_text(m.content)
        )
        _writer.submit(str(m.id), job)
    return len(chosen)


@dataclass(frozen=True)
class _ClearedResult:
    settings: Settings
    owner_id: str
    conversation_id: str
    relative: str  # its workspace path
    text: str


def _write_cleared_result(message_id: str, job: _ClearedResult) -> None:
    """Write one cleared result to its workspace path unless it is there already."""
    with session_scope() as session:
        present = wq.entries_at(session, conversation_id=job.conversation_id, paths=[job.relative])
    if job.relative not in present:
        write_tool_result(
            settings=job.settings,
            owner_id=job.owner_id,
            conversation_id=job.conversation_id,
            message_id=message_id,
            text=job.text,
        )
    _written(message_id)


_writer = BackgroundWriter(_write_cleared_result, name="cleared-tool-results")


def flush_cleared_results(timeout: float = 5.0) -> bool:
    """Wait until the cleared results handed over are written (False on timeout)."""
    return _writer.flush(timeout)


def _written(message_id: str) -> None:
    if len(WRITTEN) > MAX_WRITTEN:
        WRITTEN.clear()  # only a shortcut: the entries are asked again
    WRITTEN.add(message_id)
