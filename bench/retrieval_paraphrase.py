"""The paraphrase query set for bench/retrieval.py: questions that share no content word
with their answer chunk.

Each answer chunk is a hand-written passage (`bench/retrieval_paraphrase_pairs.py`) set
among 4-8 filler sentences of the generated corpus's kinds, so it looks like the other
chunks. The check is mechanical: a question's content words are its words (letters and
digits, lower-cased) that are in neither the English stopword list of bm25s nor
contextq's, reduced to their Snowball stems (PyStemmer, as bm25s stems); a pair whose
question shares a stem with any word of its answer chunk is dropped and counted (filler
sentences that share one are never chosen for it).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from bench.retrieval_kinds import (
    CODE_FILLER,
    CONTRACT_FILLER,
    INCIDENT_FILLER,
    PRODUCT_FILLER,
    SUPPORT_FILLER,
)
from bench.retrieval_paraphrase_pairs import PAIRS

FILLERS = PRODUCT_FILLER + INCIDENT_FILLER + CONTRACT_FILLER + CODE_FILLER + SUPPORT_FILLER
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class ParaphraseSet:
    chunks: list[str]  # answer chunk i answers questions[i]
    questions: list[str]
    dropped: list[tuple[str, set[str]]]  # (question, shared stems) of pairs left out


def content_stems(text: str) -> set[str]:
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    from contextq.retrieval.terms import STOPWORDS

    stop = set(STOPWORDS_EN) | STOPWORDS
    words = [w for w in _WORD.findall(text.lower()) if w not in stop]
    return set(Stemmer.Stemmer("english").stemWords(words))


def build_paraphrase(seed: int = 2211) -> ParaphraseSet:
    rng = random.Random(seed)
    filler_stems = [(f, content_stems(f)) for f in FILLERS]
    chunks, questions, dropped = [], [], []
    for passage, question in PAIRS:
        asked = content_stems(question)
        usable = [f for f, stems in filler_stems if not stems & asked]
        sentences = rng.sample(usable, rng.randrange(4, 9))
        sentences.insert(rng.randrange(len(sentences) + 1), passage)
        chunk = " ".join(sentences)
        shared = asked & content_stems(chunk)
        if shared:
            dropped.append((question, shared))
            continue
        chunks.append(chunk)
        questions.append(question)
    return ParaphraseSet(chunks, questions, dropped)


if __name__ == "__main__":
    built = build_paraphrase()
    print(f"{len(built.questions)} pairs kept, {len(built.dropped)} dropped")
    for question, shared in built.dropped:
        print(f"  {question!r}: shares {sorted(shared)}")
