"""The ready-to-send context (docs/history.md#the-ready-to-send-context): plain functions over plain
data, no I/O.

The service layer calls `plan_context(...)` (what to read, from the conversation's
stored facts and the request), loads the messages, files, citation ids and the state
carried for the model (cut point, clearing line) the plan needs, and calls
`assemble_context(messages, plan, files=..., citations=..., cut_seq=..., clear_seq=...)`;
it stores the new citation ids and the cut point and clearing line it moved
(`Assembled.cut_seq`, `clear_seq`; `Assembled.carry` is the state for the next answer),
and makes sure every tool result it names by path (`Assembled.named`) is in the
workspace before it answers.

Modules: `inputs` (prompts, file views, the project slot), `prompts` (S in three layers
with its sections, CA, R), `formats` (the output formats: one module per wire format
behind one protocol, and the `FORMATS` table), `tools` (definitions read in either
vendor's form, given in the target format's), `turn` (the newest
turn, whether a search tool ran), `attachments` (files as documents, image and audio
parts, text lines, notes), `citations`, `counting` (the honest count), `pieces`
(rendered parts with their tokens), `work` (the history as pieces), `fill` (the one
budget, filled in order) with `layout` (its rules: pinned over the hard room or the
budget, the summary cut to fit, the hard room), `turn_fit` (the newest turn: its files
as many as fit, previews), `select` (the strategy with the carried cut point and
clearing line), `clearing` (the clearing line), `shrink` and `preview` (previews that
fit and say where the whole is), `project` (P), `tool_results` (large tool results as
previews, old ones as stubs, docs/context.md#clearing-old-tool-results-with-hysteresis), `render`
(the final list: the format's render),
`context` (all of it), `plan`, `bare` (a history alone: `build_history_context`).
"""

from contextq.assembly.attachments import FileNote
from contextq.assembly.bare import HistoryContext, build_history_context
from contextq.assembly.citations import CitationMap, chunk_key, file_key
from contextq.assembly.context import Assembled, assemble_context, newest_user_seq
from contextq.assembly.formats import tools_for
from contextq.assembly.inputs import (
    DEFAULT_SEARCH_TOOLS,
    Carry,
    FileView,
    ProjectContext,
    ProjectDocument,
    ProjectNote,
    Prompts,
    reminder_texts,
)
from contextq.assembly.plan import ContextPlan, plan_context
from contextq.assembly.prompts import check_granularity, check_timezone, default_system_prompt
from contextq.assembly.tools import Tool, parse_tools

__all__ = [
    "DEFAULT_SEARCH_TOOLS",
    "Assembled",
    "Carry",
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
