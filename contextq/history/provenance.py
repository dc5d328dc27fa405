"""Provenance of a summary's structured items (docs/provenance.md): every item of the goal,
decisions, errors, files and state sections ends with the seqs of the messages it came
from, `(#12)` or `(#12, #40)`; an item whose source is unknown ends with `(#?)`.

- the marker itself (`cite`, `merge_seqs`, `split_cited`) is `seq_markers`', a leaf the
  summary format writes with; they are named here too;
- `summary_items(text)` lists the items
  of a structured summary with their seqs and their content (the words a source must
  hold);
- `SourceIndex` knows the messages a compaction read (and the items of the summary it
  folds): `match(text)` finds the message an unsourced item came from by its key terms,
  `resolve(summary)` checks every item's seqs (dropping the ones that name no message
  read), matches the items left without any, and marks the rest `(#?)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from contextq.history.harvest import SUMMARY_MARKER
from contextq.history.seq_markers import ELIDED, MAX_CITED, UNSOURCED, cite, merge_seqs, split_cited
from contextq.history.summary_format import SECTIONS, parse_summary
from contextq.history.types import Message

__all__ = [  # the markers are `seq_markers`' (below the summary format); named here too
    "ELIDED",
    "MAX_CITED",
    "UNSOURCED",
    "SourceIndex",
    "SummaryItem",
    "cite",
    "holds_terms",
    "is_item",
    "item_content",
    "key_terms",
    "merge_seqs",
    "split_cited",
    "summary_items",
]

ITEM_SECTIONS = ("goal", "decisions", "errors", "files", "state", "restored")
MATCH_SHARE = 0.7  # key terms of an item a message must hold to be found its source
CITED_SHARE = 0.5  # … and to stay the source an item cites

_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")  # identifiers split at _: exit_code -> exit, code
_NUMBER = re.compile(r"\b\d{2,}(?:[.,]\d+)*\b")
_ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")  # as `normalise_error` masks them
_STOP_WORDS = (
    "the and for that this with you are was were have has had not but from they will would "
    "there their what when which into then than them been can could should about also just "
    "its our your all any some more most other such only over very here out why impact "
    "medium high low goal state next step stated last result first open subtask recurring "
    "alert earlier"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
_SCAFFOLD = (
    re.compile(r"^(?:goal|state|next step|stated next|last result|phase):\s*", re.I),
    re.compile(r"^\[[ x]\]\s*"),
    re.compile(r"^recurring \(x\d+\)(?: alert)?:\s*", re.I),
)
_TRAILERS = re.compile(
    r"(?:\s\(impact: (?:high|medium|low)\)|\s\(first open subtask\)|\s\(x\d+\)"
    r"|\s\(earlier: .*\))$"
)


def key_terms(text: str, *, numbers: bool = True) -> frozenset[str]:
    """The words (3+ letters, no stop words) and, with `numbers`, the numbers of 2+
    digits of `text`: what a message it came from must hold."""
    lowered = text.lower()
    terms = {w for w in _WORD.findall(lowered) if w not in _STOP}
    if numbers:
        terms.update(_NUMBER.findall(lowered))
    return frozenset(terms)


def holds_terms(original: str, content: str) -> bool:
    """Whether `original` (a message's text) holds every key term of an item's content,
    read as written or with its numbers masked as error patterns are (`port N`)."""
    terms = key_terms(content, numbers=False)
    if not terms:
        return True
    lowered = original.lower()
    masked = _ANY_NUMBER.sub("n", lowered)
    return all(term in lowered or term in masked for term in terms)


def item_content(line: str) -> str:
    """An item's own words: no bullet, checkbox, label, impact, counts or rationale."""
    text = _BULLET.sub("", line.strip())
    for pattern in _SCAFFOLD:
        text = pattern.sub("", text)
    text = text.split(" — why: ", 1)[0]
    previous = None
    while previous != text:
        previous, text = text, _TRAILERS.sub("", text)
    return text.strip()


def is_item(section: str, line: str) -> bool:
    """Whether `line` of `section` is a structured item (Phase and Progress are labels)."""
    stripped = line.strip()
    if section not in ITEM_SECTIONS or not stripped:
        return False
    if section == "goal":
        return stripped.startswith("Goal:") or bool(re.match(r"^[-*] \[[ x]\]", stripped))
    if section == "state":
        return True
    return bool(_BULLET.match(stripped))


@dataclass(frozen=True, slots=True)
class SummaryItem:
    section: str
    line: str  # as written, with its marker
    content: str  # the item's own words (see item_content)
    seqs: tuple[int, ...]  # real seqs cited (no ELIDED)

    @property
    def sourced(self) -> bool:
        return bool(self.seqs)


def summary_items(summary: str) -> list[SummaryItem]:
    """The structured items of a summary in our format, in order."""
    items = []
    for section, lines in parse_summary(summary).sections.items():
        for line in lines:
            if is_item(section, line):
                body, seqs, _ = split_cited(line)
                real = tuple(s for s in seqs if s >= 0)
                items.append(SummaryItem(section, line, item_content(body), real))
    return items


class SourceIndex:
    """The messages a compaction read, by seq and key terms, and the items (with their
    seqs) of the summaries it folds: where an item's seqs are checked and matched."""

    def __init__(self, messages: Sequence[Message], *, also_valid: Iterable[int] = ()) -> None:
        self.valid: set[int] = set(also_valid)
        self._sources: list[tuple[frozenset[str], tuple[int, ...]]] = []
        self._terms: dict[int, frozenset[str]] = {}  # a message read: its key terms
        for message in messages:
            if message.name == SUMMARY_MARKER:
                self._add_summary(message.text())
            elif message.seq >= 0:
                terms = key_terms(_message_text(message))
                self.valid.add(message.seq)
                self._terms[message.seq] = terms
                self._sources.append((terms, (message.seq,)))

    def _add_summary(self, text: str) -> None:
        for item in summary_items(text):
            self.valid.update(item.seqs)
            if item.seqs:
                self._sources.append((key_terms(item.content), item.seqs))
        for seq in re.findall(r"^- \(#(\d+)", text, re.M):  # the narrative's citations
            self.valid.add(int(seq))

    def match(self, text: str) -> tuple[int, ...]:
        """The seqs of the source holding most of `text`'s key terms (at least
        MATCH_SHARE of them, 2 or more), the newest on a tie; () when none does."""
        wanted = key_terms(text)
        if not wanted:
            return ()
        need = max(min(2, len(wanted)), MATCH_SHARE * len(wanted))
        best: tuple[int, ...] = ()
        best_hits = 0
        for terms, seqs in self._sources:
            hits = len(wanted & terms)
            if hits >= need and hits >= best_hits:
                best, best_hits = seqs, hits
        return best

    def resolve(self, summary: str) -> tuple[str, int]:
        """`summary` with every item's seqs checked: seqs naming no message read are
        dropped, an item left without any is matched back to its source or marked
        `(#?)`. Returns (text, items left unsourced)."""
        titles = {f"## {title}".lower(): key for key, title in SECTIONS.items()}
        section = ""
        unsourced = 0
        out = []
        for line in summary.split("\n"):
            key = titles.get(line.strip().rstrip(":").lower())
            if key is not None or line.startswith("## "):
                section = key or ""
                out.append(line)
            elif is_item(section, line):
                resolved, found = self._resolve_line(line)
                unsourced += not found
                out.append(resolved)
            else:
                out.append(line)
        return "\n".join(out), unsourced

    def _resolve_line(self, line: str) -> tuple[str, bool]:
        body, seqs, _ = split_cited(line)
        content = item_content(body)
        wanted = key_terms(content)
        kept = tuple(s for s in seqs if s == ELIDED or self._names_source(s, wanted))
        if not any(s >= 0 for s in kept):
            kept = self.match(content)
        return body + cite(kept), any(s >= 0 for s in kept)

    def _names_source(self, seq: int, wanted: frozenset[str]) -> bool:
        """`seq` names a message read that holds at least CITED_SHARE of the item's key
        terms (or one known only from a folded summary or the memory)."""
        if seq not in self.valid:
            return False
        terms = self._terms.get(seq)
        if terms is None or not wanted:
            return True
        return len(wanted & terms) >= max(1, CITED_SHARE * len(wanted))


def _message_text(message: Message) -> str:
    parts = [message.text()]
    for call in message.tool_calls or ():
        function = call.get("function") or {}
        parts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(parts)
