"""Large tool results in a context read (docs/workspaces.md#large-tool-results): their previews, and
the workspace copies of the results a context cleared.

A stored tool message over TOOL_RESULT_OFFLOAD_TOKENS stands in the context as the file
processors' preview for its format. The preview is the processed text of its workspace
File (`tool-results/<message id>.<ext>`, written at insert) when the worker has made it;
else the same processors run here, in memory, over the message's text. A stored message
never changes, so a preview is kept per process by message id (bounded).

A context that clears old tool results (or shows a result as a preview) names their
workspace paths; a result that is not there yet (one under the offload threshold, or
whose write at insert failed) is written before the answer is returned, all of an
answer's together (`ensure_written` → `service.workspaces.write_tool_results`: one bulk
put, a transaction per 256 files, processing enqueued off the request path): every path
an answer names answers 200 when the client gets it. The writes happen when the
clearing line moves (it stays put between moves, and what it cleared stays written), so
their cost is paid once per move, not per read.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Sequence
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
from service.workspaces.tool_results import write_tool_results
from store import context_queries as cq
from store import workspace_queries as wq
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


def ensure_written(
    session: Session,
    settings: Settings,
    *,
    owner_id: str,
    conversation_id: str,
    messages: Sequence[Message],
    named_ids: Sequence[str],
) -> list[str]:
    """Write each tool result among `named_ids` (those the answer shows by their
    workspace path: stubs, previews) that is not in the workspace yet, before the answer
    is returned, so every path it names answers 200. A result already written (at insert,
    or by an earlier answer) costs nothing: known ids are remembered per process, the
    others looked up in one query. Returns warnings for results that could not be
    written (the storage quota, a full disk), logged."""
    by_id = {str(m.id): m for m in messages if m.id is not None}
    unknown = [by_id[i] for i in dict.fromkeys(named_ids) if i not in WRITTEN and i in by_id]
    if not unknown:
        return []
    paths = {str(m.id): result_path(m) for m in unknown}
    present = wq.entries_at(session, conversation_id=conversation_id, paths=list(paths.values()))
    missing = {
        str(m.id): content_text(m.content) for m in unknown if paths[str(m.id)] not in present
    }
    failed = write_tool_results(
        settings=settings,
        owner_id=owner_id,
        conversation_id=conversation_id,
        results=missing,
        paths=paths,
    )
    for m in unknown:
        if str(m.id) not in failed:
            _written(str(m.id))
    return [
        f"the tool result of message {key} could not be written to the workspace ({problem}): "
        "the path its stub or preview names is missing"
        for key, problem in failed.items()
    ]


def _written(message_id: str) -> None:
    if len(WRITTEN) > MAX_WRITTEN:
        WRITTEN.clear()  # only a shortcut: the entries are asked again
    WRITTEN.add(message_id)
