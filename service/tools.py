"""Executing contextq's built-in tools (docs/workspaces.md#following-a-stub, docs/mcp.md): one use
case the route (`POST /v1/conversations/{id}/tools/{name}`), the MCP server over HTTP
and, through the API, the stdio MCP server and the SDK all share.

`execute_tool` checks the tool's name, the conversation's owner and the model's
arguments (`contextq.builtin_tools`), then runs the tool over the workspace, project and
memory use cases, so the same path rules and owner checks hold as on their own routes.
The answer is the tool result as text for the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlmodel import Session

from contextq import builtin_tools as bt
from contextq.assembly.tool_results import container_path
from contextq.errors import Conflict
from contextq.settings import Settings
from service import projects, workspaces
from service.history import memory
from service.workspaces.locate import owned_conversation
from store.history_tables import Conversation

MAX_LISTED = 200  # workspace_list: entries in one answer


def execute_tool(
    *,
    session: Session,
    settings: Settings,
    owner_id: str,
    conversation_id: str,
    name: str,
    arguments: Any,
) -> str:
    """The tool result as text. NotFound for an unknown tool or another owner's
    conversation; ValidationFailed naming the argument for bad arguments or a refused
    path; the workspace's and memory's own errors as on their routes."""
    tool = bt.get_tool(name)
    conversation = owned_conversation(session, owner_id=owner_id, conversation_id=conversation_id)
    args = bt.parse_arguments(tool, arguments)
    run = _RUNNERS[tool.name]
    return run(session, settings, conversation, args)


def _workspace_read(
    session: Session, settings: Settings, conversation: Conversation, args: bt.WorkspaceRead
) -> str:
    view = workspaces.processed_view(
        session=session,
        settings=settings,
        owner_id=conversation.owner_id,
        conversation_id=conversation.id,
        path=args.path,
        offset=args.offset,
        limit=args.limit,
    )
    summary = (view.truncation or {}).get("summary", "")
    return f"{view.text}\n\n[{container_path(view.path)}: {summary}]".lstrip("\n")


def _workspace_list(
    session: Session, settings: Settings, conversation: Conversation, args: bt.WorkspaceList
) -> str:
    entries, more = workspaces.list_entries(
        session=session,
        owner_id=conversation.owner_id,
        conversation_id=conversation.id,
        prefix=args.prefix,
        limit=MAX_LISTED,
    )
    if not entries:
        where = f" under `{args.prefix}`" if args.prefix else ""
        return f"The workspace has no files{where}."
    lines = [
        f"{container_path(e.path)}\t{e.size_bytes} bytes\t{e.status or 'no processed view'}"
        for e in entries
    ]
    if more:
        lines.append(f"[the first {MAX_LISTED} files only: narrow the prefix for the others]")
    return "\n".join(lines)


def _project_search(
    session: Session, settings: Settings, conversation: Conversation, args: bt.ProjectSearch
) -> str:
    # imported here: service.projects and service.history import each other, and loading
    # projects first (this module may be the first to) would find history half-loaded

    if conversation.project_id is None:
        raise Conflict(
            "this conversation has no project to search; set its project_id "
            "(PATCH /v1/conversations/{id}) first"
        )
    hits = projects.search_project(
        session=session,
        owner_id=conversation.owner_id,
        project_id=conversation.project_id,
        query=args.query,
        limit=args.limit,
    )
    if not hits:
        return f"No passage of the project matches {args.query!r}."
    blocks = []
    for rank, hit in enumerate(hits, 1):
        where = [f"chunk {hit.index}"]
        if hit.page is not None:
            where.append(f"page {hit.page}")
        if hit.sheet:
            where.append(f"sheet {hit.sheet}")
        if hit.line_start is not None:
            where.append(f"lines {hit.line_start}-{hit.line_end}")
        if hit.heading:
            where.append(f"under {hit.heading!r}")
        blocks.append(f"[{rank}] {hit.title} ({', '.join(where)})\n{hit.text}")
    return "\n\n".join(blocks)


def _memory_get(
    session: Session, settings: Settings, conversation: Conversation, args: bt.MemoryGet
) -> str:
    text = memory.memory_context(
        session=session,
        settings=settings,
        owner_id=conversation.owner_id,
        conversation_id=conversation.id,
    )
    return text or "The memory is empty: no goal, decisions, errors or actions yet."


def _memory_add_decision(
    session: Session, settings: Settings, conversation: Conversation, args: bt.MemoryAddDecision
) -> str:
    snapshot = memory.add_decision(
        session=session,
        settings=settings,
        owner_id=conversation.owner_id,
        conversation_id=conversation.id,
        decision=args.decision,
        rationale=args.rationale,
        impact=args.impact,
    )
    count = len(snapshot["decisions"])
    held = "1 decision" if count == 1 else f"{count} decisions"
    return f"Recorded the decision ({args.impact} impact); the memory holds {held}."


def _memory_record_error(
    session: Session, settings: Settings, conversation: Conversation, args: bt.MemoryRecordError
) -> str:
    entry = memory.track_error(
        session=session,
        settings=settings,
        owner_id=conversation.owner_id,
        conversation_id=conversation.id,
        error=args.error,
    )
    times = "once" if entry["count"] == 1 else f"{entry['count']} times"
    alert = "; it keeps coming back: try another approach" if entry["alert"] else ""
    return f"Recorded under the pattern {entry['pattern']!r}, seen {times}{alert}."


_RUNNERS: dict[str, Callable[[Session, Settings, Conversation, Any], str]] = {
    bt.WORKSPACE_READ.name: _workspace_read,
    bt.WORKSPACE_LIST.name: _workspace_list,
    bt.PROJECT_SEARCH.name: _project_search,
    bt.MEMORY_GET.name: _memory_get,
    bt.MEMORY_ADD_DECISION.name: _memory_add_decision,
    bt.MEMORY_RECORD_ERROR.name: _memory_record_error,
}
