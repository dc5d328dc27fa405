"""The final list from ordered pieces, its honest count and where the tokens went.

OpenAI: one message per piece, as is. Anthropic (SPEC §2, §4, §6):
- system pieces (S, then the history's own system messages) become the top-level
  `system`, a list of text blocks;
- consecutive user turns (documents, the user's message, tool results, the reminder)
  merge into one message, tool results first, so a reminder after a tool result joins
  the message that carries that result;
- the list starts with a user turn (a short placeholder when filtering left an
  assistant turn first, or no message at all: the Messages API needs at least one);
- `cache_control: {"type": "ephemeral"}` marks the last system block and the last block
  before the newest turn (2 of the 4 breakpoints the API allows), and
  `stable_prefix_tokens` counts everything up to that second breakpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextq.assembly.counting import frame_tokens, json_tokens
from contextq.assembly.inputs import CATEGORIES, Category
from contextq.assembly.pieces import Piece, Target
from contextq.history.formats import ANTHROPIC_OPENING

CACHE_CONTROL = {"type": "ephemeral"}
_FORMULA_BLOCKS = ("image", "image_url", "input_audio")


@dataclass(slots=True)
class Rendered:
    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None  # format=anthropic
    token_count: int
    breakdown: dict[str, int]
    stable_prefix_tokens: int | None = None  # format=anthropic
    kept: list[Piece] = field(default_factory=list)


def render(pieces: Sequence[Piece], *, turn_start: int, target: Target) -> Rendered:
    """`pieces` in order; `turn_start`: index of the first piece of the newest turn
    (len(pieces) when there is none)."""
    if target.format == "anthropic":
        return _anthropic(pieces, turn_start, target)
    breakdown = _empty()
    for piece in pieces:
        _charge(breakdown, piece.category, piece.tokens, piece.file_tokens)
    messages = [p.out for p in pieces if p.out is not None]
    return Rendered(messages, None, sum(breakdown.values()), breakdown, kept=list(pieces))


def _empty() -> dict[str, int]:
    return dict.fromkeys(CATEGORIES, 0)


def _charge(breakdown: dict[str, int], category: Category, tokens: int, files: int = 0) -> None:
    breakdown[category] += tokens - files
    breakdown["files"] += files


def _mark(block: dict[str, Any], encoding: str) -> tuple[dict[str, Any], int]:
    """A copy of `block` with a cache breakpoint, and the tokens that adds."""
    marked = {**block, "cache_control": dict(CACHE_CONTROL)}
    if block.get("type") in _FORMULA_BLOCKS:
        return marked, 0
    if isinstance(block.get("content"), list):
        before = json_tokens({**block, "content": []}, encoding)
        after = json_tokens({**marked, "content": []}, encoding)
    else:
        before, after = json_tokens(block, encoding), json_tokens(marked, encoding)
    return marked, after - before


def _anthropic(pieces: Sequence[Piece], turn_start: int, target: Target) -> Rendered:
    enc = target.encoding
    breakdown = _empty()
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    marker: tuple[int, int] | None = None  # (message, block) of the last block before the turn
    stable = 0  # tokens of the system blocks and of the messages before the turn
    for index, piece in enumerate(pieces):
        if index == turn_start and messages:
            marker = (len(messages) - 1, len(messages[-1]["content"]) - 1)
        if not piece.blocks:
            continue
        before_turn = index < turn_start
        _charge(breakdown, piece.category, piece.tokens, piece.file_tokens)
        stable += piece.tokens if before_turn else 0
        if piece.role == "system":
            system.extend(piece.blocks)
            continue
        role = piece.wire_role
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(piece.blocks)
            continue
        messages.append({"role": role, "content": list(piece.blocks)})
        frame = frame_tokens(role, enc)
        breakdown[piece.category] += frame
        stable += frame if before_turn else 0
    if marker is None and turn_start >= len(pieces) and messages:
        marker = (len(messages) - 1, len(messages[-1]["content"]) - 1)
    if not messages or messages[0]["role"] == "assistant":
        block = {"type": "text", "text": ANTHROPIC_OPENING}
        messages.insert(0, {"role": "user", "content": [block]})
        opening = frame_tokens("user", enc) + json_tokens(block, enc)
        breakdown["history"] += opening
        stable += opening
        marker = (marker[0] + 1, marker[1]) if marker is not None else None
    marker = _tool_results_first(messages, marker)
    stable += _breakpoints(system, messages, marker, breakdown, enc)
    total = sum(breakdown.values())
    return Rendered(messages, system, total, breakdown, stable, list(pieces))


def _tool_results_first(
    messages: list[dict[str, Any]], marker: tuple[int, int] | None
) -> tuple[int, int] | None:
    """In each user message, tool results before anything else (an API rule); the
    breakpoint follows its block."""
    for m_index, message in enumerate(messages):
        blocks = message["content"]
        if message["role"] != "user" or not any(b.get("type") == "tool_result" for b in blocks):
            continue
        order = sorted(range(len(blocks)), key=lambda i: blocks[i].get("type") != "tool_result")
        message["content"] = [blocks[i] for i in order]
        if marker is not None and marker[0] == m_index:
            marker = (m_index, order.index(marker[1]))
    return marker


def _breakpoints(
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    marker: tuple[int, int] | None,
    breakdown: dict[str, int],
    enc: str,
) -> int:
    """Mark the cache breakpoints; returns the tokens the marks add before the turn."""
    added_total = 0
    if system:
        system[-1], added = _mark(system[-1], enc)
        breakdown["system"] += added
        added_total += added
    if marker is not None:
        blocks = messages[marker[0]]["content"]
        blocks[marker[1]], added = _mark(blocks[marker[1]], enc)
        breakdown["history"] += added
        added_total += added
    return added_total
