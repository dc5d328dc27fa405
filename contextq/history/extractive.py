"""The offline extractive summariser: deterministic, no model, no network
(docs/history.md#compaction).

It writes the structured summary of `summary_format`: the memory-backed sections from
`MemoryFacts` verbatim (or, without a memory, from what the messages and the previous
summary state), then errors (one line per error pattern, newest first), the files and
paths touched, the current state and next step, and a narrative of the most informative
sentences (TF-IDF, weighted towards specifics: numbers, paths, identifiers, and most of
all a measured value or an id standing alone, 4 digits or more) in their original order.
The files section lists changed files first (an edit or write tool), then read ones; a
path it lists does not score a narrative sentence twice. It spends its budget: the
narrative fills what the other sections leave, so a summary ends near `max_tokens` when
the history has that much to say.

Provenance (docs/provenance.md): it knows where everything came from, so every item ends with the
seqs of its messages (`(#12, #40)`; one path a line in the files section), and each
narrative line starts with the seq it quotes. A memory fact whose source the memory does
not know is written `(#?)`; compaction matches it back (`provenance.SourceIndex`).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from typing import Any

from contextq.errors import SummarizerError
from contextq.history.harvest import (
    PATH_EDGES,
    TOOL_LINES_PER_MESSAGE,
    Candidate,
    Harvest,
    harvest,
)
from contextq.history.retention import fit_summary
from contextq.history.seq_markers import cite
from contextq.history.summary_format import (
    MemoryFacts,
    decision_lines,
    goal_lines,
    merge_facts,
    recurring_lines,
    render_summary,
    squash,
)
from contextq.history.types import Message
from contextq.tokens import DEFAULT_ENCODING, count_tokens, get_encoding

ERROR_SHARE, FILES_SHARE, STATE_SHARE = 0.2, 0.15, 0.05
_WORD = re.compile(r"[a-z0-9_]{3,}")
_NO_DIGITS = str.maketrans("", "", string.digits)
_NO_UPPER = str.maketrans("", "", string.ascii_uppercase)
_STOP_WORDS = (
    "the and for that this with you are was were have has had not but from they will would "
    "there their what when which into then than them been can could should about also just "
    "its it's our your all any some more most other such only over very here out"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
_ROLE_WEIGHT = {"user": 1.2, "assistant": 1.0, "summary": 1.0}
_TOOL_WEIGHT = 0.6
_LINE_PREFIX_TOKENS = 8  # "- (#1234 assistant) "
# a number of 4+ digits standing alone (a count, a size, an id), not part of a path or name
_VALUE = re.compile(r"(?<![\w./-])\d{1,3}(?:[,.]?\d{3})+(?:\.\d+)?(?![\w/])")
VALUE_BONUS = 1.5


class ExtractiveSummarizer:
    """Same input, same output."""

    name = "extractive"

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        encoding: str = DEFAULT_ENCODING,
        facts: MemoryFacts | None = None,
    ) -> str:
        if max_tokens <= 0:
            raise SummarizerError("max_tokens must be positive")
        found = harvest(messages)
        known = merge_facts(facts or MemoryFacts(), found.facts())
        if not (found.sentences or found.errors or found.error_lines) and known.is_empty():
            # (summaries of summaries whose room went to the memory's sections carry no
            # narrative: their facts are still a summary)
            raise SummarizerError("nothing to summarise: the messages have no text")
        header = f"Summary of {len(messages)} earlier messages{_seq_range(messages)}:"
        enc = get_encoding(encoding)
        sections = {"goal": goal_lines(known), "decisions": decision_lines(known)}
        room = max_tokens - _cost(enc, header) - 16 - _cost(enc, *sections["goal"])
        room -= _cost(enc, *sections["decisions"])
        share = max(0, room)
        sections["errors"] = _fit(enc, _error_lines(found, known), int(share * ERROR_SHARE))
        sections["files"] = _fit(enc, _path_lines(found), int(share * FILES_SHARE))
        sections["state"] = _fit(enc, _state_lines(found, known), int(share * STATE_SHARE))
        for key in ("errors", "files", "state"):
            room -= _cost(enc, *sections[key]) + 6
        listed = _listed_paths(sections["files"])
        chosen = _narrative(found, known, enc, room, listed)
        return _render_within(header, sections, chosen, max_tokens, encoding)


def _seq_range(messages: Sequence[Message]) -> str:
    seqs = [m.seq for m in messages if m.seq >= 0]
    return f" (#{seqs[0]}-#{seqs[-1]})" if seqs else ""


def _cost(enc: Any, *lines: str) -> int:
    return sum(len(enc.encode_ordinary(line)) + 1 for line in lines)


def _fit(enc: Any, lines: list[str], room: int) -> list[str]:
    """The first lines that fit `room` (the lists come most important first)."""
    out: list[str] = []
    used = 0
    for line in lines:
        cost = _cost(enc, line)
        if used + cost > room:
            break
        out.append(line)
        used += cost
    return out


def _error_lines(found: Harvest, facts: MemoryFacts) -> list[str]:
    """The recurring patterns, then each error as it was written (its newest wording and
    two earlier ones), newest first."""
    lines = recurring_lines(facts)
    lines += [fact.line() for fact in reversed(found.errors.values())]
    return lines + found.error_lines


def _path_lines(found: Harvest) -> list[str]:
    """One path a line, most touched first (then the newest), with its messages' seqs."""
    ranked = sorted(
        found.paths.items(), key=lambda item: (-item[1][0], -max(item[1][1], default=-1))
    )
    return [f"- {path}{cite(seqs)}" for path, (_, seqs) in ranked]


def _state_lines(found: Harvest, facts: MemoryFacts) -> list[str]:
    lines = [said.line("State") for said in found.state]
    last_error = next(reversed(found.errors.values()), None)
    if last_error is not None and found.sentences and last_error.seq >= found.sentences[-1].seq:
        lines.append(f"Last result: {last_error.text}{cite((last_error.seq,))}")
    if facts.open_subtasks:
        name = facts.open_subtasks[0]
        seqs = facts.seqs_of(f"subtask:{name}")
        lines.append(f"Next step: {name} (first open subtask){cite(seqs)}")
    if found.next_step:
        lines.append(found.next_step.line("Stated next"))
    return lines


# ---------------------------------------------------------------- narrative


def _listed_paths(lines: list[str]) -> set[str]:
    return {line.removeprefix("- ").rsplit(" (#", 1)[0] for line in lines}


def _narrative(
    found: Harvest, facts: MemoryFacts, enc: Any, room: int, listed: set[str]
) -> list[Candidate]:
    """The best sentences that fit `room`; a path the files section lists counts as
    said already (its sentence scores on what else it says)."""
    already = {squash(d.text) for d in facts.decisions}
    if facts.goal:
        already.add(squash(facts.goal))
    pool = _unique(c for c in found.sentences if squash(c.text) not in already)
    _score(pool, listed)
    pool = _cap_tool_lines(pool)
    chosen: list[Candidate] = []
    used = 0
    for candidate in sorted(pool, key=lambda c: -c.score):
        candidate.tokens = len(enc.encode_ordinary(candidate.text)) + _LINE_PREFIX_TOKENS
        if used + candidate.tokens > room:
            continue
        chosen.append(candidate)
        used += candidate.tokens
        if room - used < _LINE_PREFIX_TOKENS + 4:
            break
    return sorted(chosen, key=lambda c: c.order)


def _unique(candidates: Any) -> list[Candidate]:
    newest: dict[str, Candidate] = {}
    for candidate in candidates:
        newest[squash(candidate.text)] = candidate
    return sorted(newest.values(), key=lambda c: c.order)


def _score(pool: list[Candidate], listed: Collection[str] = ()) -> None:
    texts = [_without(c.text, listed) for c in pool]
    words = [[w for w in _WORD.findall(t.lower()) if w not in _STOP] for t in texts]
    df: Counter[str] = Counter()
    for ws in words:
        df.update(set(ws))
    total = max(1, len(pool))
    last = max((c.order for c in pool), default=0) + 1
    templates = Counter(c.text.translate(_NO_DIGITS) for c in pool)
    idf = {w: math.log((1 + total) / (1 + n)) + 1.0 for w, n in df.items()}
    for candidate, text, ws in zip(pool, texts, words, strict=True):
        if not ws:
            candidate.score = 0.0
            continue
        tf = Counter(ws)
        weight = sum(count * idf[w] for w, count in tf.items()) / math.sqrt(len(ws))
        weight *= _ROLE_WEIGHT.get(candidate.role, _TOOL_WEIGHT)
        specifics = _specifics(text)
        recency = candidate.order / last
        repeats = templates[candidate.text.translate(_NO_DIGITS)]  # same words, other numbers
        candidate.score = weight * (1 + 0.3 * specifics) * (0.9 + 0.2 * recency)
        if specifics and _VALUE.search(text):  # a measured value or an id, not a line number
            candidate.score *= VALUE_BONUS
        candidate.score /= math.sqrt(repeats)


def _without(text: str, paths: Collection[str]) -> str:
    """`text` less the paths of `paths` it names (what another section already says)."""
    if not paths or ("/" not in text and "." not in text):
        return text
    kept = [w for w in text.split() if w.strip(PATH_EDGES).rstrip(".,:;") not in paths]
    return " ".join(kept)


def _specifics(text: str) -> int:
    """How specific a sentence is (0-4): numbers, identifiers, paths, quoted names, inner
    capitals. Counted with str.translate/count: a regex here costs more than the rest."""
    digits = len(text) - len(text.translate(_NO_DIGITS))
    marks = text.count("_") + text.count("/") + text.count("`") + text.count('"')
    dots = text.count(".") - text.endswith(".")
    capitals = len(text) - len(text.translate(_NO_UPPER)) - text[:1].isupper()
    found = (digits >= 2) + (digits >= 5) + min(2, marks) + (dots > 0) + (capitals > 0)
    return min(4, found)


def _cap_tool_lines(pool: list[Candidate]) -> list[Candidate]:
    """At most TOOL_LINES_PER_MESSAGE lines of one tool result (by the seq it came from:
    a folded summary's lines each keep the result they quote)."""
    by_message: dict[tuple[int, int], list[Candidate]] = defaultdict(list)
    for candidate in pool:
        if candidate.role.startswith("tool"):
            by_message[candidate.message, candidate.seq].append(candidate)
    dropped: set[int] = set()
    for group in by_message.values():
        for candidate in sorted(group, key=lambda c: -c.score)[TOOL_LINES_PER_MESSAGE:]:
            dropped.add(candidate.order)
    return [c for c in pool if c.order not in dropped]


def _line(candidate: Candidate) -> str:
    return f"- (#{candidate.seq} {candidate.role}) {candidate.text}"


def _render_within(
    header: str,
    sections: dict[str, list[str]],
    chosen: list[Candidate],
    max_tokens: int,
    encoding: str,
) -> str:
    """Render; if the estimate overshot, drop the lowest-scored narrative lines."""
    for _ in range(4):
        sections["narrative"] = [_line(c) for c in chosen]
        text = render_summary(header, sections)
        over = count_tokens(text, encoding) - max_tokens
        if over <= 0:
            return text
        by_score = sorted(chosen, key=lambda c: c.score)
        drop: set[int] = set()
        for candidate in by_score:
            if over <= 0:
                break
            drop.add(candidate.order)
            over -= candidate.tokens
        chosen = [c for c in chosen if c.order not in drop]
    return fit_summary(render_summary(header, sections), max_tokens, encoding)
