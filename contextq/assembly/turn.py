"""The newest turn (docs/context.md#the-newest-turn): from the newest user message that is not a
tool result to
the end. An assistant message without tool calls ends a turn: a context asked for after
that final answer has no turn-scoped parts (no citation reminder, no citations section);
CA, P and F still stand before that newest user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextq.history.types import Message


@dataclass(frozen=True, slots=True)
class TurnSplit:
    start: int  # index of the newest user message (len(history) when there is none)
    open: bool  # the turn has not ended with a final answer


def is_tool_result(message: Message) -> bool:
    """A tool result: role `tool`, or a user message made only of `tool_result` parts
    (the shape Anthropic-style clients send)."""
    if message.role == "tool":
        return True
    content = message.content
    return (
        message.role == "user"
        and isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and p.get("type") == "tool_result" for p in content)
    )


def split_turn(history: Sequence[Message]) -> TurnSplit:
    """Where the newest turn starts in `history` (oldest first), and whether it is open."""
    start = len(history)
    for i in range(len(history) - 1, -1, -1):
        message = history[i]
        if message.role == "user" and not is_tool_result(message):
            start = i
            break
    ended = bool(history) and history[-1].role == "assistant" and not history[-1].tool_calls
    return TurnSplit(start, not ended)


def tools_called(turn: Sequence[Message]) -> list[str]:
    """Names of the tools the turn's assistant messages called, in order."""
    names: list[str] = []
    for message in turn:
        for call in message.tool_calls or ():
            name = (call.get("function") or {}).get("name")
            if isinstance(name, str) and name:
                names.append(name)
    return names


def search_ran(
    turn: Sequence[Message],
    *,
    turn_open: bool,
    tools_used: Sequence[str] | None,
    search_tools: Sequence[str],
) -> bool:
    """A search tool ran in the current turn: from `tools_used` when given, else from the
    turn's tool calls; never once the turn has ended."""
    if not turn_open:
        return False
    used = tools_used if tools_used is not None else tools_called(turn)
    wanted = set(search_tools)
    return any(name in wanted for name in used)
