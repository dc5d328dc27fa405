"""contextq's own tools (docs/workspaces.md#following-a-stub, docs/mcp.md), defined once.

An agent without a sandbox that mounts `/workspace` still reaches what a cleared stub or
a preview names: `workspace_read` reads a workspace file in portions, `workspace_list`
lists the workspace, `project_search` searches the project; the memory tools read the
conversation's memory and record a decision or an error. Each tool is one `BuiltinTool`
here: its name, its description and an arguments model, from which come the JSON schema
(rendered in each context format's shape, or MCP's) and the check of what a model sends
(`parse_arguments`: a ValidationFailed naming the field). The service executes them
(`service/tools.py`) for the API route, the MCP server and the SDK alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from contextq.assembly.formats import tools_for
from contextq.assembly.tools import Tool
from contextq.errors import NotFound, ValidationFailed
from contextq.history.types import FormatName

ToolFormat = Literal[FormatName, "mcp"]  # a context's formats, and MCP's tool shape
MAX_PATH_CHARS = 4096
MAX_QUERY_CHARS = 2000
MAX_TEXT_CHARS = 10_000


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WorkspaceRead(_Arguments):
    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="The workspace path, e.g. /workspace/tool-results/<id>.csv as a stub "
        "or preview names it (the /workspace/ prefix is optional).",
    )
    offset: int = Field(
        default=0, ge=0, description="Where the portion starts: a line, data row or page, from 0."
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        le=5000,
        description="How many lines (at most 5000), data rows (2000) or pages (50); "
        "default: as many as a preview shows.",
    )


class WorkspaceList(_Arguments):
    prefix: str = Field(
        default="",
        max_length=MAX_PATH_CHARS,
        description="Only paths starting with this (e.g. tool-results/); default: all.",
    )


class ProjectSearch(_Arguments):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for.")
    limit: int = Field(default=5, ge=1, le=20, description="How many passages (1-20).")


class MemoryGet(_Arguments):
    pass


class MemoryAddDecision(_Arguments):
    decision: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="The decision.")
    rationale: str = Field(default="", max_length=MAX_TEXT_CHARS, description="Why it was made.")
    impact: Literal["high", "medium", "low"] = Field(
        default="medium", description="How much it constrains the rest of the work."
    )


class MemoryRecordError(_Arguments):
    error: str = Field(
        min_length=1, max_length=MAX_TEXT_CHARS, description="The error message as seen."
    )


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    name: str
    description: str
    arguments: type[_Arguments]

    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema, without pydantic's titles."""
        schema: dict[str, Any] = _untitled(self.arguments.model_json_schema())
        return schema

    def definition(self) -> Tool:
        return Tool(name=self.name, description=self.description, schema=self.input_schema())


WORKSPACE_READ = BuiltinTool(
    "workspace_read",
    "Read a file of this conversation's workspace in portions, such as the full tool "
    "result a cleared stub or a preview names. Text comes in lines, tables in data rows "
    "(the header row always shown), documents in pages; the answer ends with where the "
    "next portion starts.",
    WorkspaceRead,
)
WORKSPACE_LIST = BuiltinTool(
    "workspace_list",
    "List the files in this conversation's workspace with their size and processing "
    "status, optionally only those under a path prefix.",
    WorkspaceList,
)
PROJECT_SEARCH = BuiltinTool(
    "project_search",
    "Search the documents of this conversation's project. Answers the best-matching "
    "passages, each with its file and where in it.",
    ProjectSearch,
)
MEMORY_GET = BuiltinTool(
    "memory_get",
    "Read this conversation's memory: the goal and its subtasks, the key decisions, "
    "error patterns and recent actions.",
    MemoryGet,
)
MEMORY_ADD_DECISION = BuiltinTool(
    "memory_add_decision",
    "Record a decision and why it was made in this conversation's memory, so later "
    "turns keep to it.",
    MemoryAddDecision,
)
MEMORY_RECORD_ERROR = BuiltinTool(
    "memory_record_error",
    "Record an error this conversation ran into; the memory counts errors by pattern "
    "and raises an alert when one keeps coming back.",
    MemoryRecordError,
)

TOOLS: dict[str, BuiltinTool] = {
    t.name: t
    for t in (
        WORKSPACE_READ,
        WORKSPACE_LIST,
        PROJECT_SEARCH,
        MEMORY_GET,
        MEMORY_ADD_DECISION,
        MEMORY_RECORD_ERROR,
    )
}
# what `GET …/context?builtin_tools=true` adds (docs/workspaces.md#following-a-stub): the tools that
# follow a stub
CONTEXT_TOOLS: tuple[str, ...] = ("workspace_read", "workspace_list", "project_search")


def get_tool(name: str) -> BuiltinTool:
    tool = TOOLS.get(name)
    if tool is None:
        raise NotFound(f"no built-in tool named {name!r}; the tools are {', '.join(TOOLS)}")
    return tool


def definitions(fmt: ToolFormat, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The definitions of these tools (all by default) in a context format's shape
    (`contextq.assembly.formats`), or MCP's (`name`, `description`, `inputSchema`)."""
    chosen = [get_tool(n) for n in names] if names is not None else list(TOOLS.values())
    if fmt == "mcp":
        return [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema()}
            for t in chosen
        ]
    return tools_for([t.definition() for t in chosen], fmt)


def parse_arguments(tool: BuiltinTool, raw: Any) -> Any:
    """The model's arguments (an object, or None for none) checked against the tool's
    schema; ValidationFailed names the first bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ValidationFailed(
            f"the arguments of {tool.name} must be a JSON object", field="arguments"
        )
    try:
        return tool.arguments.model_validate(dict(raw))
    except PydanticValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        message = "unknown argument" if error["type"] == "extra_forbidden" else error["msg"]
        raise ValidationFailed(f"{message} (an argument of {tool.name})", field=where) from None


def _untitled(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: _untitled(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def with_context_tools(tools: Sequence[Any] | None) -> list[Any]:
    """`tools` (the request's or the conversation's definitions, either format) and the
    definitions `builtin_tools=true` adds (CONTEXT_TOOLS); a tool of the caller's with
    the same name as a built-in one is kept and the built-in one left out."""
    given = list(tools or [])
    taken = {_name_of(t) for t in given}
    extra = [d for d in definitions("openai", CONTEXT_TOOLS) if d["function"]["name"] not in taken]
    return given + extra


def _name_of(tool: Any) -> Any:
    if not isinstance(tool, Mapping):
        return None
    function = tool.get("function")
    return function.get("name") if isinstance(function, Mapping) else tool.get("name")
