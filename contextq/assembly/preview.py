"""A preview of a message too large for the room it has (SPEC §5 "Any model", §9): the
head and tail of its text with a line saying what was cut. A huge tool result is never
sent whole past the hard room.
"""

from __future__ import annotations

from dataclasses import replace

from contextq.history.types import Message, content_text
from contextq.tokens import get_encoding

NOTE_TOKENS = 60  # room kept for the note line
HEAD_SHARE = 0.6


def preview_text(text: str, max_tokens: int, encoding: str) -> tuple[str, int, int]:
    """`text` within about `max_tokens` tokens: head and tail with a note in between.
    Returns (text, tokens of the original, tokens kept)."""
    enc = get_encoding(encoding)
    tokens = enc.encode_ordinary(text)
    total = len(tokens)
    if total <= max_tokens:
        return text, total, total
    keep = max(0, max_tokens - NOTE_TOKENS)
    head_n = int(keep * HEAD_SHARE)
    tail_n = keep - head_n
    head = enc.decode(tokens[:head_n]) if head_n else ""
    tail = enc.decode(tokens[total - tail_n :]) if tail_n else ""
    note = (
        f"\n[… preview: {total - keep} of {total} tokens cut from the middle of this message "
        "because it does not fit the model's context window …]\n"
    )
    return head + note + tail, total, keep


def preview_message(message: Message, max_tokens: int, encoding: str) -> Message:
    """The message with its text replaced by a preview (tool calls kept; no id, so no
    count remembered for the stored message is taken for it)."""
    text = content_text(message.content)
    shown, _, _ = preview_text(text, max_tokens, encoding)
    return replace(message, content=shown, token_count=None, id=None)
