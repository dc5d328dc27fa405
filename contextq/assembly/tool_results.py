"""Large and old tool results in the context (docs/workspaces.md#large-tool-results).

- **Preview.** A stored tool message over TOOL_RESULT_OFFLOAD_TOKENS stands in the
  context as the file processors' preview for its format (`ToolResultView.preview`, made
  by the service: the processed text of its workspace File, or the processors run in
  memory) plus one line naming its workspace path and full size (`stand_in`). When room
  is short the preview's body shrinks; the line never does (`contextq.assembly.shrink`).
- **Clearing.** Tool results older than the newest `keep_tool_results` ones become
  one-line stubs naming their size and workspace path (`stub`), before any message is
  dropped. Which ones is decided by the clearing line (`contextq.assembly.clearing`):
  results with a seq below it are cleared. The call and its result stay paired: only
  the result's content changes.

Every path a stub or a preview names answers 200 by the time the answer is returned:
the assembly lists the tool results it shows by path (`Work.named`), and the service
writes those not in the workspace yet before it answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from contextq.history.native import shown_as
from contextq.history.types import Message, content_text
from contextq.workspace.tool_results import tool_result_extension, tool_result_path

CONTAINER_ROOT = "/workspace"
STUB_MIN_CHARS = 200  # a result this short is left as it is: its stub would not be shorter


@dataclass(frozen=True, slots=True)
class ToolResultView:
    """A large tool result as the context shows it: `preview` (the processors' text for
    its format) and where the whole of it is."""

    path: str  # relative workspace path: tool-results/<message id>.<ext>
    size_bytes: int
    preview: str


def container_path(relative: str) -> str:
    return f"{CONTAINER_ROOT}/{relative}"


@lru_cache(maxsize=20_000)
def _relative_path(message_id: str, text: str) -> str:
    return tool_result_path(message_id, tool_result_extension(text))


def result_path(message: Message) -> str:
    """The workspace path (relative) a tool message's full result is written to."""
    return _relative_path(str(message.id), content_text(message.content))


def result_size(message: Message) -> int:
    return len(content_text(message.content).encode("utf-8", "surrogatepass"))


def _size(tokens: int | None, size_bytes: int) -> str:
    told = f"{size_bytes:,} bytes"
    return f"{tokens:,} tokens, {told}" if tokens is not None else told


def preview_line(tokens: int | None, size_bytes: int, path: str, *, body: bool = True) -> str:
    """The line a preview of a tool result ends with: where the whole result is."""
    size = _size(tokens, size_bytes)
    if not body:
        return (
            f"[A tool result ({size}) not shown here for lack of room. "
            f"The full result is at {container_path(path)}.]"
        )
    return (
        f"[This is a preview of a large tool result ({size}). "
        f"The full result is at {container_path(path)}.]"
    )


def with_line(body: str, line: str) -> str:
    return f"{body.rstrip()}\n\n{line}" if body.strip() else line


def stand_in(message: Message, view: ToolResultView) -> Message:
    """The message with its content replaced by the preview and the line naming the
    whole result (its id and seq kept; counted afresh; a native result keeps its block,
    item or part with only its content replaced)."""
    line = preview_line(message.token_count, view.size_bytes, view.path)
    return shown(message, with_line(view.preview, line))


def stub(message: Message, *, tokens: int | None, size_bytes: int, path: str) -> Message:
    """The one-line stub of a cleared tool result."""
    size = f"{tokens:,} tokens" if tokens is not None else f"{size_bytes:,} bytes"
    text = f"[Old tool result cleared ({size}); full result at {container_path(path)}]"
    return shown(message, text)


def shown(message: Message, text: str) -> Message:
    """`message` shown as `text` (uncounted): its native slice, if any, keeps every field
    but its content (`contextq.history.native.shown_as`)."""
    native = shown_as(message.native, message.role, text)
    return replace(message, content=text, token_count=None, native=native)


def tool_result_indices(history: Sequence[Message]) -> list[int]:
    return [i for i, m in enumerate(history) if m.role == "tool" and m.id is not None]


def keep_line(history: Sequence[Message], keep: int) -> int | None:
    """The seq of the `keep`-th newest tool result: results below it may be cleared
    (None when there are no more than `keep`)."""
    tools = tool_result_indices(history)
    if len(tools) <= keep:
        return None
    return history[tools[len(tools) - keep]].seq if keep > 0 else history[tools[-1]].seq + 1


def to_clear(history: Sequence[Message], *, line: int, protected: Iterable[int]) -> list[int]:
    """Indices of the tool results with a seq below `line`. Protected messages (the turn,
    pinned ones and their chains) and results already shorter than their stub stay as
    they are."""
    skip = set(protected)
    return [
        i
        for i in tool_result_indices(history)
        if history[i].seq < line
        and i not in skip
        and not history[i].pinned
        and len(content_text(history[i].content)) > STUB_MIN_CHARS
    ]
