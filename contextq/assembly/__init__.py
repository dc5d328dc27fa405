"""The ready-to-send context (SPEC §6): plain functions over plain data, no I/O.

The service layer calls `plan_context(...)` (what to read, from the conversation's
stored facts and the request), loads the messages, files, citation ids and cut point
the plan needs, and calls `assemble_context(messages, plan, files=..., citations=...,
cut_seq=...)`; it stores the new citation ids and a moved cut point it returns.

Modules: `inputs` (prompts, file views, the project slot), `prompts` (S in three layers
with its sections, CA, R), `tools` (definitions in either format), `turn` (the newest
turn, whether a search tool ran), `attachments` (files as documents, image and audio
parts, text lines, notes), `citations`, `counting` (the honest count), `pieces`
(rendered parts with their tokens), `work` (the history as pieces), `fill` (the one
budget, filled in order) with `layout` (its rules: pinned over budget, the turn's
previews, the summary cut to fit), `preview`, `project` (P), `tool_results` (large tool
results as previews, old ones cleared to stubs, SPEC §9), `render` (the final list),
`context` (all of it), `plan`, `bare` (a history alone: `build_history_context`).
"""

from contextq.assembly.attachments import FileNote
from contextq.assembly.bare import HistoryContext, build_history_context
from contextq.assembly.citations import CitationMap, chunk_key, file_key
from contextq.assembly.context import Assembled, assemble_context, newest_user_seq
from contextq.assembly.inputs import (
    DEFAULT_SEARCH_TOOLS,
    FileView,
    ProjectContext,
    ProjectDocument,
    ProjectNote,
    Prompts,
    reminder_texts,
)
from contextq.assembly.plan import ContextPlan, plan_context
from contextq.assembly.prompts import check_granularity, check_timezone, default_system_prompt
from contextq.assembly.tools import Tool, parse_tools, tools_for

__all__ = [
    "DEFAULT_SEARCH_TOOLS",
    "Assembled",
    "CitationMap",
    "ContextPlan",
    "FileNote",
    "FileView",
    "HistoryContext",
    "ProjectContext",
    "ProjectDocument",
    "ProjectNote",
    "Prompts",
    "Tool",
    "assemble_context",
    "build_history_context",
    "check_granularity",
    "check_timezone",
    "chunk_key",
    "default_system_prompt",
    "file_key",
    "newest_user_seq",
    "parse_tools",
    "plan_context",
    "reminder_texts",
    "tools_for",
]
