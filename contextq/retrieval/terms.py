"""Search terms from a user's query text.

The query is user input (a pasted page, FTS syntax, any unicode): it is never handed to a
full-text engine as syntax. Only its words are kept — runs of letters and digits, as the
engines' own tokenizers (SQLite unicode61, PostgreSQL's parser) see them — lower-cased,
unique, without common English function words (unless nothing else is left), at most
`MAX_QUERY_TERMS` of them (the longest, which are the most specific on average). The store
quotes each one and ORs them, so any input gives results or none, never a syntax error.
"""

from __future__ import annotations

import re
import unicodedata

MAX_QUERY_TERMS = 48
MAX_QUERY_SCAN_CHARS = 20_000  # a longer query is read this far

_WORD = re.compile(r"[^\W_]+")

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
    """The words of `query` to search for, in order of first appearance (maybe empty)."""
    text = unicodedata.normalize("NFKC", query[:MAX_QUERY_SCAN_CHARS]).lower()
    words = list(dict.fromkeys(_WORD.findall(text)))
    content = [w for w in words if w not in STOPWORDS]
    terms = content or words
    if len(terms) <= max_terms:
        return terms
    keep = set(sorted(terms, key=len, reverse=True)[:max_terms])  # stable: earlier wins ties
    return [t for t in terms if t in keep]
