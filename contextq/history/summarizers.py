"""Summarisers for compaction, and the truncation fallback.

- `ExtractiveSummarizer` (offline default): deterministic; keeps goals, pinned facts,
  decisions and errors, then the most informative sentences by TF-IDF.
- `OpenAISummarizer`: any OpenAI-compatible chat-completions endpoint, over httpx with
  timeouts and exponential backoff on 429 / 5xx / connection errors. It raises
  `SummarizerError` on failure: a failed summary is never returned as a summary.
- `truncate_history`: the fallback — 25% of the token target from the start, 75% from
  the end, and an annotation of exactly what was removed.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from contextq.errors import SummarizerError
from contextq.history.memory import normalise_error
from contextq.history.message_tokens import token_count
from contextq.history.types import Message
from contextq.settings import Settings
from contextq.tokens import DEFAULT_ENCODING, count_tokens, get_encoding, truncate_to_tokens

log = logging.getLogger("contextq.history.summarizers")


class Summarizer(Protocol):
    """Turns messages into a summary of at most `max_tokens` tokens, or raises SummarizerError."""

    name: str

    def summarize(
        self, messages: Sequence[Message], *, max_tokens: int, encoding: str = DEFAULT_ENCODING
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


# ---------------------------------------------------------------- extractive

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9_]{3,}")
_DECISION = re.compile(
    r"\b(decided|decision|we will|i will|let's|chose|choose|going with|settled on|agreed)\b", re.I
)
_ERROR = re.compile(
    r"\b(error|exception|traceback|failed|failure|cannot|can't|denied|timeout)\b", re.I
)
_GOAL = re.compile(
    r"\b(goal|objective|task|need to|want to|please|must|should|requirement|todo)\b", re.I
)
_STOP_WORDS = (
    "the and for that this with you are was were have has had not but from they will would "
    "there their what when which into then than them been can could should about also just "
    "its it's our your all any some more most other such only over very here out"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
_MAX_SENTENCE_CHARS = 400
# share of the budget each section may take first; what is left goes to key points
_SHARES = {"goals": 0.15, "pinned": 0.25, "decisions": 0.2, "errors": 0.15}


@dataclass(slots=True)
class _Sentence:
    order: int
    seq: int
    role: str
    text: str
    section: str  # goals | pinned | decisions | errors | points
    score: float = 0.0


class ExtractiveSummarizer:
    """Deterministic extractive summary: same input, same output, no model, no network."""

    name = "extractive"

    def summarize(
        self, messages: Sequence[Message], *, max_tokens: int, encoding: str = DEFAULT_ENCODING
    ) -> str:
        if max_tokens <= 0:
            raise SummarizerError("max_tokens must be positive")
        sentences = _sentences(messages)
        if not sentences:
            raise SummarizerError("nothing to summarise: the messages have no text")
        _score(sentences)
        header = f"Summary of {len(messages)} earlier messages" + _seq_range(messages) + ":"
        enc = get_encoding(encoding)
        room = max_tokens - len(enc.encode_ordinary(header)) - 8
        chosen = _choose(sentences, room, enc)
        titles = {
            "goals": "GOALS",
            "pinned": "PINNED FACTS",
            "decisions": "DECISIONS",
            "errors": "ERRORS",
            "points": "KEY POINTS",
        }
        blocks = [header]
        for section, title in titles.items():
            lines = [f"- ({s.role} #{s.seq}) {s.text}" for s in chosen if s.section == section]
            if lines:
                blocks.append(f"{title}:\n" + "\n".join(lines))
        text = "\n\n".join(blocks)
        return truncate_to_tokens(text, max_tokens, encoding)[0]


def _seq_range(messages: Sequence[Message]) -> str:
    if not messages:
        return ""
    return f" (#{messages[0].seq}-#{messages[-1].seq})"


def _sentences(messages: Sequence[Message]) -> list[_Sentence]:
    out: list[_Sentence] = []
    seen_errors: set[str] = set()
    first_user = True
    for message in messages:
        if message.role == "system" and not message.pinned:
            continue
        text = message.text()
        if message.tool_calls:
            calls = [str((c.get("function") or {}).get("name", "")) for c in message.tool_calls]
            text = (text + "\n" if text else "") + f"Called {', '.join(calls)}."
        is_error_message = message.kind == "error" or (
            message.role == "tool" and _ERROR.search(text[:200]) is not None
        )
        for raw in _SENTENCE.split(text):
            sentence = raw.strip()
            if len(sentence) < 3:
                continue
            if len(sentence) > _MAX_SENTENCE_CHARS:
                sentence = sentence[:_MAX_SENTENCE_CHARS] + " …"
            section = _section(message, sentence, is_error_message, first_user=first_user)
            if section == "errors":
                pattern = normalise_error(sentence)
                if pattern in seen_errors:
                    continue  # one example per error pattern
                seen_errors.add(pattern)
            out.append(_Sentence(len(out), message.seq, message.role, sentence, section))
        if message.role == "user":
            first_user = False
    return out


def _section(message: Message, sentence: str, is_error: bool, *, first_user: bool) -> str:
    if message.pinned:
        return "pinned"
    if message.kind == "decision" or (message.role != "tool" and _DECISION.search(sentence)):
        return "decisions"
    if is_error or _ERROR.search(sentence):
        return "errors"
    if message.role == "user" and (
        first_user or message.kind == "user_prompt" or _GOAL.search(sentence)
    ):
        return "goals"
    return "points"


def _score(sentences: list[_Sentence]) -> None:
    words = [[w for w in _WORD.findall(s.text.lower()) if w not in _STOP] for s in sentences]
    df: Counter[str] = Counter()
    for ws in words:
        df.update(set(ws))
    total = len(sentences)
    idf = {w: math.log((1 + total) / (1 + n)) + 1.0 for w, n in df.items()}
    for sentence, ws in zip(sentences, words, strict=True):
        if not ws:
            sentence.score = 0.0
            continue
        tf = Counter(ws)
        weight = sum(count * idf[w] for w, count in tf.items()) / math.sqrt(len(ws))
        if sentence.role == "user":
            weight *= 1.2
        # later sentences break ties (recent context matters more)
        sentence.score = weight + sentence.order / (total * 100.0)


def _choose(sentences: list[_Sentence], room: int, enc: Any) -> list[_Sentence]:
    chosen: list[_Sentence] = []
    used = 0

    def take(candidates: list[_Sentence], limit: int) -> int:
        spent = 0
        for s in candidates:
            cost = len(enc.encode_ordinary(s.text)) + 8
            if used + spent + cost > room:
                continue
            if spent + cost > limit:
                break
            chosen.append(s)
            spent += cost
        return spent

    for section, share in _SHARES.items():
        group = [s for s in sentences if s.section == section]
        if section == "goals":
            ordered = group  # the first statements of intent matter most
        elif section == "pinned":
            ordered = group
        else:
            ordered = sorted(group, key=lambda s: -s.order)  # newest decisions/errors first
        used += take(ordered, int(room * share))
    points = sorted((s for s in sentences if s.section == "points"), key=lambda s: -s.score)
    used += take(points, room - used)
    chosen.sort(key=lambda s: s.order)
    return chosen


# ---------------------------------------------------------------- openai

SUMMARY_PROMPT = (
    "You compress the history of a conversation between a user and an AI agent so the "
    "agent can continue without the original messages. Keep: the user's goals and "
    "requirements, decisions and their reasons, errors and how they were handled, facts "
    "marked as pinned, file names, identifiers, numbers and open tasks. Drop small talk "
    "and repeated tool output. Write plain text with short sections, at most {max_tokens} "
    "tokens."
)
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAISummarizer:
    """Summaries from any OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.transport = transport

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> OpenAISummarizer:
        options: dict[str, Any] = {
            "base_url": settings.OPENAI_BASE_URL,
            "model": settings.SUMMARIZER_MODEL,
            "api_key": settings.OPENAI_API_KEY,
            "timeout_s": settings.SUMMARIZER_TIMEOUT_S,
            "max_retries": settings.SUMMARIZER_MAX_RETRIES,
        }
        options.update(overrides)
        return cls(**options)

    def summarize(
        self, messages: Sequence[Message], *, max_tokens: int, encoding: str = DEFAULT_ENCODING
    ) -> str:
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SUMMARY_PROMPT.format(max_tokens=max_tokens)},
                {"role": "user", "content": render_transcript(messages)},
            ],
            "max_tokens": max_tokens,
            "temperature": 0,
        }
        data = self._post("/chat/completions", body)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise SummarizerError(
                f"summariser answer has no choices[0].message.content: {exc}"
            ) from exc
        if not isinstance(content, str) or not content.strip():
            raise SummarizerError("summariser returned an empty summary")
        return truncate_to_tokens(content.strip(), max_tokens, encoding)[0]

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = "no attempt made"
        last_retry_after: float | None = None
        with httpx.Client(timeout=self.timeout, transport=self.transport) as client:
            for attempt in range(self.max_retries + 1):
                if attempt:
                    time.sleep(self._delay(attempt, last_retry_after))
                last_retry_after = None
                try:
                    response = client.post(self.base_url + path, json=body, headers=headers)
                except httpx.TransportError as exc:  # connect, read timeout, protocol
                    last = f"{type(exc).__name__}: {exc}"
                    log.warning("summariser request failed (attempt %d): %s", attempt + 1, last)
                    continue
                if response.status_code in _RETRY_STATUS:
                    last = f"HTTP {response.status_code}: {response.text[:200]}"
                    last_retry_after = _retry_after(response)
                    log.warning("summariser answered %s (attempt %d)", last, attempt + 1)
                    continue
                if response.status_code >= 400:
                    raise SummarizerError(
                        f"summariser refused the request: HTTP {response.status_code}: "
                        f"{response.text[:200]}"
                    )
                try:
                    payload = response.json()
                except json.JSONDecodeError as exc:
                    raise SummarizerError(f"summariser answer is not JSON: {exc}") from exc
                if not isinstance(payload, dict):
                    raise SummarizerError("summariser answer is not a JSON object")
                return payload
        raise SummarizerError(f"summariser failed after {self.max_retries + 1} attempts: {last}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        delay = self.backoff_s * (2 ** (attempt - 1))
        if retry_after is not None:
            delay = max(delay, retry_after)
        return float(min(delay, self.max_backoff_s))


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def get_summarizer(settings: Settings, name: str | None = None) -> Summarizer | None:
    """The configured summariser (`SUMMARIZER`); None for `truncation` (fallback only)."""
    choice = name or settings.SUMMARIZER
    if choice == "extractive":
        return ExtractiveSummarizer()
    if choice == "openai":
        return OpenAISummarizer.from_settings(settings)
    if choice == "truncation":
        return None
    raise SummarizerError(f"unknown summariser {choice!r}")


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
