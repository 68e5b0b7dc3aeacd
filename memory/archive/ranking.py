"""How the archive ranks what was said, without a model call: the steps that
bench/conversation_recall.py measures one by one (docs/CONVERSATIONS.md has the figures)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.archive.query import BROAD_WORDS
from memory.archive.records import ArchivedMessage
from memory.text.tokenize import stem, tokenize

# Words of a question that say it is a question, not what it is about: "When did Caroline go to
# the support group?" is about Caroline, going, a support group. Stemmed, as the index is.
QUESTION_WORDS = frozenset(
    stem(word)
    for word in """when what where who whom which why how did does do remember recall tell told
    mention mentioned ever know knew ask asked kind sort type thing something anyone someone
    """.split()  # noqa: SIM905
) | frozenset(stem(word) for word in BROAD_WORDS)
QUESTION_CJK = frozenset("什么哪里哪儿谁为何怎么多少几时候记得还吗呢")


@dataclass(frozen=True)
class Ranking:
    """The ranking steps a search takes (each one measured; the defaults are the ones kept).

    - `weighted_terms`: the query's content words (question words and stop words out, English
      stemmed, Chinese as characters and pairs) matched as any-of, ranked by BM25; off, the
      older rule: all the query's terms, then any of them when nothing has them all.
    - `bm25`: the candidates scored again here by BM25 with the index's document frequencies
      and `b`, how much a message's length counts, lower than FTS5's fixed 0.75 (a short
      greeting that names the person asked about then ranks below the message about the
      thing asked).
    - `context`: the share of a neighbouring message's score a message gets, so an answer
      ("UCLA!") ranks with the question it answers ("where do you work?"); measured, no gain:
      off (0).
    - `dates`: a date in the question ("last May", "on May 2nd", "去年五月") limits the search
      to that period when anything was said then.
    - `embedder`: an embedding model (`TextEmbeddings`) re-ranking the best candidates by
      similarity to the question (None: off; it costs a model call per search).
    """

    weighted_terms: bool = True
    bm25: bool = True
    k1: float = 1.2
    b: float = 0.3
    context: float = 0.0
    dates: bool = True
    # What people say about a day they often say a day or two later (or from another time
    # zone): the period a question names is widened by this many days on each side.
    date_slack_days: float = 2.0
    # A word in more messages than this finds no candidates (it still scores them): ranking
    # thousands of matches of a common word costs tens of milliseconds and adds little.
    common_matches: int = 500
    candidates: int = 30  # rescored; 100 found 0.002 more on the tuning split, in twice the time
    context_of: int = 20  # the best candidates whose neighbours are scored
    embedder: Any = None
    embedding_weight: float = 0.5
    rerank: int = 20

    @classmethod
    def baseline(cls) -> Ranking:
        """The ranking before these steps: all terms, then any, BM25, no context or dates."""
        return cls(weighted_terms=False, bm25=False, context=0.0, dates=False)


def content_terms(query: str) -> tuple[str, ...]:
    """The terms a question is about, as the index holds them, each once."""
    terms = [
        t
        for t in tokenize(query)
        if t not in QUESTION_WORDS
        and not (len(t) == 1 and t in QUESTION_CJK)
        and not (len(t) == 2 and not t.isascii() and set(t) <= QUESTION_CJK)
    ]
    return tuple(dict.fromkeys(terms))


def bm25_scores(
    terms: Sequence[str],
    documents: Sequence[Sequence[str]],
    frequencies: Mapping[str, int],
    total: int,
    ranking: Ranking,
) -> list[float]:
    """BM25 of each tokenized document for `terms`, document frequencies from the whole index
    (`total` documents)."""
    if not documents:
        return []
    average = sum(len(d) for d in documents) / len(documents) or 1.0
    total = max(total, len(documents))
    idf = {
        t: math.log(1 + (total - frequencies.get(t, 1) + 0.5) / (frequencies.get(t, 1) + 0.5))
        for t in terms
    }
    scores = []
    for document in documents:
        counts = Counter(document)
        norm = ranking.k1 * (1 - ranking.b + ranking.b * len(document) / average)
        scores.append(
            sum(
                idf[t] * counts[t] * (ranking.k1 + 1) / (counts[t] + norm)
                for t in terms
                if counts[t]
            )
        )
    return scores


def reranked(
    query: str, candidates: list[tuple[ArchivedMessage, float]], ranking: Ranking
) -> list[tuple[ArchivedMessage, float]]:
    """The best `rerank` candidates ordered again by BM25 (scaled to the best) plus the
    embedding similarity to the question; the rest keep their order after them."""
    head, tail = candidates[: ranking.rerank], candidates[ranking.rerank :]
    if len(head) < 2:
        return candidates
    import numpy as np

    vectors = np.asarray(
        ranking.embedder.embed_documents([query, *(m.content for m, _ in head)]), dtype=float
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    similarity = vectors[1:] @ vectors[0]
    best = max(score for _, score in head) or 1.0
    scored = [
        (message, score / best + ranking.embedding_weight * float(sim))
        for (message, score), sim in zip(head, similarity, strict=True)
    ]
    return sorted(scored, key=lambda pair: -pair[1]) + tail
