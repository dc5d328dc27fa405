"""Summarisers for compaction, and the truncation fallback.

Every summariser writes the structured summary of `summary_format` (docs/history.md#compaction) and
takes the memory's facts (`MemoryFacts`: goal, subtasks, phase, decisions, error patterns),
which it must write verbatim; compaction checks that it did (`retention`).

- `ExtractiveSummarizer` (offline default, `extractive.py`): deterministic.
- A model's summary: `summary_messages` is the request (its prompt asks for the same
  sections and carries the memory's sections to copy, and asks that every line of the
  structured sections end with the seqs of the transcript messages it came from,
  `(#12, #40)`; the transcript writes each message as `[#12] role: text`), and
  `summary_from_answer` reads a chat-completions answer (SummarizerError when it holds
  none: a failed summary is never returned as a summary). Compaction checks the seqs and
  matches back or marks `(#?)` the lines without valid ones. The HTTP call itself is the
  service's (`service.summarizers.OpenAISummarizer`): the engine does no I/O.
- `truncate_history`: the fallback — 25% of the token target from the start, 75% from
  the end, and an annotation of exactly what was removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from contextq.errors import SummarizerError
from contextq.history.extractive import ExtractiveSummarizer
from contextq.history.message_tokens import token_count
from contextq.history.summary_format import (
    SECTIONS,
    MemoryFacts,
    decision_lines,
    goal_lines,
    recurring_lines,
)
from contextq.history.types import Message
from contextq.tokens import DEFAULT_ENCODING, count_tokens, get_encoding, truncate_to_tokens

__all__ = [
    "ExtractiveSummarizer",
    "Summarizer",
    "Truncation",
    "render_transcript",
    "summary_from_answer",
    "summary_messages",
    "truncate_history",
]


class Summarizer(Protocol):
    """Turns messages into a structured summary of at most `max_tokens` tokens, writing
    `facts` verbatim, or raises SummarizerError."""

    name: str

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        encoding: str = DEFAULT_ENCODING,
        facts: MemoryFacts | None = None,
    ) -> str: ...


# ---------------------------------------------------------------- transcript


def render_line(message: Message, *, max_chars: int | None = None) -> str:
    """One message as a transcript line: `[#12] user: text`."""
    head = f"[#{message.seq}] {message.role}"
    if message.role == "tool" and message.name:
        head += f" ({message.name})"
    parts = [message.text()]
    for call in message.tool_calls or ():
        function = call.get("function") or {}
        parts.append(f"-> {function.get('name', '')}({function.get('arguments', '')})")
    text = "\n".join(p for p in parts if p)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + " …"
    return f"{head}: {text}"


def render_transcript(messages: Sequence[Message], *, max_chars: int | None = None) -> str:
    return "\n".join(render_line(m, max_chars=max_chars) for m in messages)


# ---------------------------------------------------------------- a model's summary

_SECTION_LIST = "\n".join(f"## {SECTIONS[key]}" for key in list(SECTIONS)[:6])
SUMMARY_PROMPT = (
    "You compress the history of a conversation between a user and an AI agent so the "
    "agent can continue without the original messages. Write the summary in exactly these "
    "sections, in this order, each under its heading line:\n"
    f"{_SECTION_LIST}\n"
    "Copy the goal, the phase, the subtasks (done [x] / open [ ]), the decisions with their "
    "rationale and the recurring error patterns given under MEMORY exactly as written, "
    "word for word. Under errors give each distinct error once: its message and where it "
    "happened, never a raw traceback. List every file and workspace path the agent read or "
    "changed. Under the current state, say where the work stands and the next step. The "
    "narrative tells the rest: what was tried, found and done, with identifiers, numbers "
    "and names exactly as written. Drop small talk and repeated tool output. "
    "Provenance: every line of the goal, decisions, errors, files and current-state "
    "sections is one item and ends with the seqs of the transcript messages it came from, "
    "written (#12) or (#12, #40): each transcript message starts with its seq as [#12]. "
    "Keep the seqs that MEMORY lines and an earlier summary already give. Write one file "
    "or path per line. A narrative line that quotes a message starts with its seq, as "
    "- (#12) text. At most {max_tokens} tokens."
)


def summary_messages(
    messages: Sequence[Message], *, max_tokens: int, facts: MemoryFacts | None
) -> list[dict[str, str]]:
    """The chat messages that ask a model for the summary: the prompt, then the request."""
    return [
        {"role": "system", "content": SUMMARY_PROMPT.format(max_tokens=max_tokens)},
        {"role": "user", "content": summary_request(messages, facts)},
    ]


def summary_from_answer(data: Any, *, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The summary in a chat-completions answer, cut to `max_tokens`; SummarizerError when
    the answer holds none (a failed summary is never returned as a summary)."""
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise SummarizerError(
            f"summariser answer has no choices[0].message.content: {exc}"
        ) from exc
    if not isinstance(content, str) or not content.strip():
        raise SummarizerError("summariser returned an empty summary")
    return truncate_to_tokens(content.strip(), max_tokens, encoding)[0]


def summary_request(messages: Sequence[Message], facts: MemoryFacts | None) -> str:
    """The user turn of a summary request: MEMORY (to copy verbatim), then TRANSCRIPT."""
    memory = []
    if facts is not None:
        memory = [*goal_lines(facts), *decision_lines(facts), *recurring_lines(facts)]
    head = "MEMORY (copy verbatim):\n" + ("\n".join(memory) if memory else "(none)")
    return f"{head}\n\nTRANSCRIPT:\n{render_transcript(messages)}"


# ---------------------------------------------------------------- truncation


@dataclass(frozen=True, slots=True)
class Truncation:
    text: str
    omitted_messages: int
    omitted_tokens: int
    head_messages: int
    tail_messages: int


def format_count(n: int) -> str:
    """`150230` → `150 230` (thin groups of three, as the annotation shows them)."""
    return f"{n:,}".replace(",", " ")


def truncate_history(
    messages: Sequence[Message], *, max_tokens: int, encoding: str = DEFAULT_ENCODING
) -> Truncation:
    """Keep 25% of `max_tokens` from the start and 75% from the end, whole messages where
    they fit, with `[... 812 messages (#13-#824), 150 230 tokens omitted ...]` between."""
    head_room = max_tokens // 4
    tail_room = max_tokens - head_room - 40  # room for the annotation line
    head: list[int] = []
    used = 0
    for i, message in enumerate(messages):
        cost = token_count(message)
        if used + cost > head_room:
            break
        head.append(i)
        used += cost
    tail: list[int] = []
    used = 0
    for i in range(len(messages) - 1, (head[-1] if head else -1), -1):
        cost = token_count(messages[i])
        if used + cost > tail_room:
            break
        tail.append(i)
        used += cost
    tail.reverse()
    first_omitted = head[-1] + 1 if head else 0
    last_omitted = tail[0] - 1 if tail else len(messages) - 1
    omitted = messages[first_omitted : last_omitted + 1]
    head_text = render_transcript([messages[i] for i in head])
    tail_text = render_transcript([messages[i] for i in tail])
    if not head and omitted:  # the first message alone is larger than the head room
        head_text = truncate_to_tokens(render_line(omitted[0]), head_room, encoding)[0]
    if not tail and omitted:  # keep the end of the newest message
        tail_text = _keep_tail(render_line(omitted[-1]), tail_room, encoding)
    omitted_tokens = sum(token_count(m) for m in omitted)
    note = ""
    if omitted:
        span = f" (#{omitted[0].seq}" + (f"-#{omitted[-1].seq})" if len(omitted) > 1 else ")")
        partial = (
            " (the first and last of them in part)"
            if not head and not tail
            else (" (the first in part)" if not head else " (the last in part)" if not tail else "")
        )
        note = (
            f"[... {format_count(len(omitted))} message{'s' if len(omitted) != 1 else ''}{span}, "
            f"{format_count(omitted_tokens)} tokens omitted{partial} ...]"
        )
    text = "\n".join(part for part in (head_text, note, tail_text) if part)
    if count_tokens(text, encoding) > max_tokens:  # counts are estimates: enforce exactly
        head_text = truncate_to_tokens(head_text, head_room, encoding)[0]
        tail_text = _keep_tail(tail_text, tail_room, encoding)
        text = "\n".join(part for part in (head_text, note, tail_text) if part)
    return Truncation(text, len(omitted), omitted_tokens, len(head), len(tail))


def _keep_tail(text: str, max_tokens: int, encoding: str) -> str:
    enc = get_encoding(encoding)
    tokens = enc.encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    kept = enc.decode_bytes(tokens[len(tokens) - max_tokens :]).decode("utf-8", errors="ignore")
    return kept.lstrip()
