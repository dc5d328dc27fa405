"""Large and old tool results in the context (SPEC §9).

- **Preview.** A stored tool message over TOOL_RESULT_OFFLOAD_TOKENS stands in the
  context as the file processors' preview for its format (`ToolResultView.preview`, made
  by the service: the processed text of its workspace File, or the processors run in
  memory) plus one line naming its workspace path and full size; it costs the preview's
  tokens.
- **Clearing.** When filtering runs (or the context is over the hard room), tool results
  older than the newest `keep_tool_results` ones become one-line stubs naming their
  size and workspace path, before the strategy drops any message. The line between
  cleared and kept moves in steps of message seqs (4 to `CLEAR_STEP_SEQS`, about a
  quarter of what the budget holds: `fill.clear_step`), not with every new message, so
  the cleared prefix stays byte-identical from turn to turn (providers' prompt caches
  keep hitting) until the line moves again. The exact line (every result but the
  newest `keep_tool_results`) is taken when it alone saves every message from being
  dropped. The call and its result stay paired: only the result's content changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from contextq.history.types import Message, content_text
from contextq.workspace.tool_results import tool_result_extension, tool_result_path

CLEAR_STEP_SEQS = 64  # the cleared/kept line moves in steps of at most this many seqs
CONTAINER_ROOT = "/workspace"


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


def _size(tokens: int | None, size_bytes: int) -> str:
    told = f"{size_bytes:,} bytes"
    return f"{tokens:,} tokens, {told}" if tokens is not None else told


def stand_in(message: Message, view: ToolResultView) -> Message:
    """The message with its content replaced by the preview and the line naming the
    whole result (its id and seq kept; counted afresh)."""
    size = _size(message.token_count, view.size_bytes)
    line = (
        f"[This is a preview of a large tool result ({size}). "
        f"The full result is at {container_path(view.path)}.]"
    )
    return replace(message, content=f"{view.preview.rstrip()}\n\n{line}", token_count=None)


def stub(message: Message, *, tokens: int | None, size_bytes: int, path: str) -> Message:
    """The one-line stub of a cleared tool result."""
    text = (
        f"[Old tool result cleared from the context ({_size(tokens, size_bytes)}). "
        f"The full result is at {container_path(path)}.]"
    )
    return replace(message, content=text, token_count=None)


def to_clear(
    history: Sequence[Message], *, keep: int, protected: Iterable[int], step: int
) -> list[int]:
    """Indices of the tool results to clear: those with a seq below the line, which is
    the seq of the `keep`-th newest tool result rounded down to a multiple of `step`
    (so the newest `keep` are never cleared and the line moves in steps). Protected
    messages (the turn, pinned ones and their chains) and results already shorter than
    their stub stay as they are."""
    tools = [i for i, m in enumerate(history) if m.role == "tool" and m.id is not None]
    if len(tools) <= keep:
        return []
    kth = history[tools[len(tools) - keep]].seq if keep > 0 else history[tools[-1]].seq + 1
    line = (kth // step) * step
    skip = set(protected)
    return [
        i
        for i in tools
        if history[i].seq < line
        and i not in skip
        and not history[i].pinned
        and len(content_text(history[i].content)) > STUB_MIN_CHARS
    ]


STUB_MIN_CHARS = 200  # a result this short is left as it is: its stub would not be shorter
