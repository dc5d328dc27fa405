"""Search terms from a user's query text.

The query is user input (a pasted page, FTS syntax, any unicode): it is never handed to a
full-text engine as syntax. Only its words are kept — runs of letters and digits, as the
engines' own tokenizers (SQLite unicode61, PostgreSQL's parser) see them — lower-cased and
unique. Words joined by `_ - . /` (`TIMESHEET_BATCH`, `us-east-1`, `v5.3`) also give a
phrase term, their words in order separated by spaces, which the engines match as adjacent
words: an identifier is found as itself, not as any chunk with its common parts. Dropped:
common English function words and single ASCII letters or digits as terms of their own
(unless nothing else is left). At most `MAX_QUERY_TERMS` terms are kept, the longest (the
most specific on average). The store quotes each term and ORs them, so any input gives
results or none, never a syntax error.
"""

from __future__ import annotations

import re
import unicodedata

MAX_QUERY_TERMS = 32
MAX_QUERY_SCAN_CHARS = 20_000  # a longer query is read this far

_WORD = re.compile(r"[^\W_]+")
_COMPOUND = re.compile(r"[^\W_]+(?:[_\-./][^\W_]+)*")

# a word list reads better as text than as 130 quoted lines
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves""".split()  # noqa: SIM905
)


def search_terms(query: str, *, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The terms of `query` to search for, in order of first appearance (maybe none): words,
    and phrases (words separated by one space) for words joined by `_ - . /`."""
    text = unicodedata.normalize("NFKC", query[:MAX_QUERY_SCAN_CHARS]).lower()
    phrases: list[str] = []
    words: list[str] = []
    for compound in _COMPOUND.findall(text):
        parts = _WORD.findall(compound)
        if len(parts) > 1:
            phrases.append(" ".join(parts))
        words.extend(parts)
    weak = [w for w in dict.fromkeys(words) if _is_weak(w)]
    terms = list(dict.fromkeys(phrases + [w for w in words if not _is_weak(w)]))
    terms = _in_query_order(text, terms) or weak
    if len(terms) <= max_terms:
        return terms
    keep = set(sorted(terms, key=len, reverse=True)[:max_terms])  # stable: earlier wins ties
    return [t for t in terms if t in keep]


def _is_weak(word: str) -> bool:
    return word in STOPWORDS or (len(word) == 1 and word.isascii())


def _in_query_order(text: str, terms: list[str]) -> list[str]:
    """Order terms by where they first appear (a phrase where its first word does)."""
    first: dict[str, int] = {}
    for match in _WORD.finditer(text):
        first.setdefault(match.group(), match.start())
    return sorted(terms, key=lambda t: (first.get(t.split(" ", 1)[0], 0), -len(t)))
