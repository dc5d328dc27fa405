"""What the assembly takes besides the history: prompts, files, project documents.

Plain data, built by the service layer from its rows (no I/O here). Everything is
immutable: a `FileView` of a ready file never changes (its artefact is immutable), so
views may be cached by the service and shared between requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from contextq.assembly.binding_state import BindState

Category = Literal[
    "system", "custom_agent", "summary", "project", "files", "history", "reasoning", "reminders"
]
# `reasoning`: the reasoning state sent (docs/context.md#reasoning-state), taken out of the history
# it rides in
CATEGORIES: tuple[Category, ...] = (
    "system",
    "custom_agent",
    "summary",
    "project",
    "files",
    "history",
    "reasoning",
    "reminders",
)
Granularity = Literal["day", "minute"]
GRANULARITIES: tuple[str, ...] = ("day", "minute")
DEFAULT_SEARCH_TOOLS: tuple[str, ...] = (
    "search",
    "web_search",
    "internal_search",
    "file_search",
    "retrieve",
)
FileStatus = Literal["uploaded", "processing", "ready", "failed", "missing"]
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class FileView:
    """A file named by a message's `file_ids`, as the context needs it.

    `status` is the row's, or `missing` when no row of the owner has that id any more
    (deleted since it was attached). For a ready file: `text` is the processed text
    (documents) or the short description (images, audio); `data_b64` / `media_type` the
    binary artefact (a resized image, an audio file), base64-encoded.
    """

    id: str
    status: FileStatus
    filename: str = ""
    category: str = "unsupported"
    file_type: str = ""
    text: str | None = None
    truncation_summary: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    error: str | None = None
    data_b64: str | None = None
    media_type: str | None = None

    @property
    def is_document(self) -> bool:
        return self.category not in ("image", "audio")


@dataclass(frozen=True, slots=True)
class ProjectDocument:
    """One document of the project slot (P): a whole file or a retrieved chunk.

    `source_key` identifies it for its citation id (`file:<id>`, `chunk:<id>`);
    `metadata` says what it is and what was left out."""

    source_key: str
    file_id: str
    title: str
    contents: str
    metadata: str
    chunk: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ProjectNote:
    """A project file the slot does not show, with a sentence a person can act on."""

    file_id: str
    reason: str
    pending: bool = False  # still processing (it joins once ready)


@dataclass(frozen=True, slots=True)
class ProjectContext:
    """The project slot: its instructions open the message, then its documents.

    `mode` "whole": `documents` are every ready file whole, shown only all together
    (when they do not all fit the room P is given, the answer asks for chunks instead:
    `Assembled.project_room`); "chunks": the best-matching chunks, best first, as many
    as fit (docs/retrieval.md). `notes`: files still processing, failed or not yet searchable."""

    instructions: str | None = None
    documents: tuple[ProjectDocument, ...] = ()
    mode: Literal["whole", "chunks"] = "chunks"
    notes: tuple[ProjectNote, ...] = ()


@dataclass(frozen=True, slots=True)
class Carry:
    """What a conversation carries from one answer to the next, per model
    (docs/context.md#the-cut-point-and-a-prefix-that-stays-put,
    docs/context.md#clearing-old-tool-results-with-hysteresis):
    where the kept history starts (the cut point, a seq) and the clearing line (tool
    results with a lower seq stand as stubs), and, for a target that binds its
    reasoning, the binding state (`contextq.assembly.binding`). All None at first; an
    answer returns the values to carry to the next (`Assembled.carry`)."""

    cut_seq: int | None = None
    clear_seq: int | None = None
    binding: BindState | None = None


@dataclass(frozen=True, slots=True)
class Prompts:
    """The prompt material of a conversation and request (docs/history.md#the-ready-to-send-context
    S, CA, R).

    `system_prompt` is the conversation's, `owner_system_prompt` the owner's saved one;
    the packaged default applies when neither is set (unless `use_default` is false:
    callers that assemble a bare history). `tools_used` is None when the request did
    not say which tools ran (then the turn's tool calls tell)."""

    system_prompt: str | None = None
    owner_system_prompt: str | None = None
    custom_agent_prompt: str | None = None
    replace_system_prompt: bool = False
    reminders: tuple[str, ...] = ()
    timezone: str | None = None
    datetime_granularity: Granularity = "day"
    search_tools: tuple[str, ...] = DEFAULT_SEARCH_TOOLS
    tools_used: tuple[str, ...] | None = None
    use_default: bool = True
    sections: bool = True


def reminder_texts(reminders: Any, *, strict: bool = True) -> tuple[str, ...]:
    """A conversation's `reminders` as texts: strings, or objects with a `text` (or
    `content`) string; blanks are skipped. Anything else raises ValueError naming the
    index (the service turns it into a 422 for `reminders[i]`), or is skipped when not
    `strict` (a row written before reminders were checked)."""
    if reminders is None:
        return ()
    out: list[str] = []
    for i, item in enumerate(reminders):
        text = item
        if isinstance(item, Mapping):
            text = item.get("text", item.get("content"))
        if not isinstance(text, str):
            if not strict:
                continue
            raise ValueError(f"reminders[{i}] must be a string or an object with a text")
        if text.strip():
            out.append(text.strip())
    return tuple(out)
