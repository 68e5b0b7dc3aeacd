"""Fusing BM25 with the semantic channel (and the days a query names): normalised scores, the
embedding side weighed by how confident it is, dropped when it is not.

Long because the shortlists, the normalisation and the confidence weighting are one scoring formula.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from memory.retrieval.bm25_index import Bm25Index, HotnessOf
from memory.retrieval.query import QueryReading, as_statement

if TYPE_CHECKING:
    from memory.retrieval.semantic import ChannelStatus

logger = logging.getLogger(__name__)

# RRF (ranks only) is kept for comparison in bench/semantic_recall.py: on dialogue questions it
# fell below BM25 alone on the held-out split, the embedding's noise taking BM25's places.
RRF_K = 5
SHORTLIST = 50  # how deep each channel is read before fusing


@dataclass(frozen=True)
class FusionWeights:
    """How the fused score is made: BM25 / its best + `embedding` × confidence × cosine above
    `cosine_floor` / the best one's + `date` for a memory written on a day the query names.

    The embedding's confidence is its margin: the best cosine minus the `margin_depth`-th,
    over `confident_margin` (capped at 1). A flat similarity profile (every memory about as
    close, chit-chat, a query the model does not understand) weighs nothing; `lexical_gap`
    also lowers it when BM25's first place stands out from its second. BM25's side has its own
    evidence check: when its best memory shares no word with the query, only single Chinese
    characters, it weighs `wordless_lexical` and the embedding leads (issue 46: "我多大了？" put
    "我三十多岁了" and "更大的房子" above "我今年40岁"). Fitted on the tuning
    splits of tests/data/memorybank_set.json and of REALTALK's chats with
    bench/dialogue_recall.py; the bare-question factor, `wordless_lexical` and the newness of
    `Bm25Index.newness` on the tuning splits of every set in tests/data/recall_sets/, kept
    because no held-out split got worse (bench/recall_kinds.py; docs/MEMORY.md has both).
    """

    embedding: float = 0.7
    cosine_floor: float = 0.1
    date: float = 1.0
    confident_margin: float = 0.1
    margin_depth: int = 10
    lexical_gap: float = 0.0
    # BM25's own confidence: its side weighs min(1, coverage / `lexical_coverage`), the
    # coverage being the IDF-weighted share of the query's terms its best memory holds; 0 off.
    lexical_coverage: float = 0.0
    # BM25 without a word: when its best memory shares no word with the query, only single
    # Chinese characters ("我多大了？" finds 多 in 很多, 大 in 更大; "我今年40岁" shares none),
    # its side weighs this (1 off): the embedding leads, BM25 only breaks near ties and fills
    # the list (0 would leave the embedding's shortlist alone). An English term is a word, so
    # this never fires on an English query. 0.1-0.3 equal on every tuning split, 0.5 loses.
    wordless_lexical: float = 0.2
    # A topic opened is followed by its details ("one of my paintings was chosen for an
    # exhibition", then "the inspiration came from a trip to Tibet"): each of the fused
    # `conversation_sources` best passes `next_in_conversation` × its score to the memory its
    # conversation created next. Fitted on the tuning split (docs/MEMORY.md); 0 off.
    next_in_conversation: float = 0.5
    conversation_sources: int = 5
    # A memory that is only a question ("What is your favourite band?") knows nothing: its
    # fused score is multiplied by this (1 off). Embeddings put such memories next to the
    # user's own questions, above the statement that answers them.
    bare_question: float = 0.5
    # Asked for advice ("Can you recommend a hotel?"), the memories that say what the user likes
    # or avoids ("I can't stand modern decor") weigh this much more (1 off): they rarely share
    # the question's words, and a recommendation that ignores them is wrong.
    preference_for_advice: float = 2.0


DEFAULT_WEIGHTS = FusionWeights()


def fuse_scores(
    lexical: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
    limit: int,
    *,
    dated: Sequence[int] = (),
    weights: FusionWeights = DEFAULT_WEIGHTS,
    hotness: HotnessOf | None = None,
    lexical_coverage: float = 1.0,
    lexical_word: bool = True,
    next_in_conversation: Callable[[int], int | None] | None = None,
    prior: Callable[[list[int]], npt.NDArray[np.float64]] | None = None,
) -> list[int]:
    """Items ordered by the fused score of `lexical` (item, BM25 score) and `semantic` (item,
    cosine, best first) plus the `dated` items (written on a day the query names) and a share
    of the best ones' scores for the memory their conversation created next
    (`next_in_conversation(item)`, `Bm25Index.next_in_conversation`), each score multiplied
    by its item's `prior` (`FusedRanking.prior`: newer answers to a question about now, bare
    questions lower); equal scores go to the hotter item, then to BM25's order, then to the
    embedding's. `lexical_coverage` is how much of the query BM25's best match holds
    (`Bm25Index.coverage`), `lexical_word` whether it shares a word with it
    (`Bm25Index.shares_word`)."""
    scores: dict[int, float] = {}
    first_seen: dict[int, int] = {}
    best_lexical = max((score for _, score in lexical), default=0.0)
    lexical_weight = lexical_confidence(lexical_coverage, weights) * (
        1.0 if lexical_word else weights.wordless_lexical)  # fmt: skip
    if lexical_weight <= 0 and semantic:  # BM25 has no evidence: the embedding judges alone
        best_lexical = 0.0
    if best_lexical > 0:
        ranked = sorted(lexical, key=lambda pair: -pair[1])
        for item, score in ranked:
            scores[item] = lexical_weight * score / best_lexical
            first_seen.setdefault(item, len(first_seen))
    # Without a word in common the embedding is the only judge: its confidence only matters
    # against BM25's.
    weight = embedding_weight(lexical, semantic, weights) if best_lexical > 0 else (
        weights.embedding if semantic else 0.0)  # fmt: skip
    if weight > 0:
        best = semantic[0][1]
        span = max(best - weights.cosine_floor, 1e-9)
        for item, cosine in semantic:
            lift = weight * max(cosine - weights.cosine_floor, 0.0) / span
            scores[item] = scores.get(item, 0.0) + lift
            first_seen.setdefault(item, len(first_seen))
    for item in dated:
        scores[item] = scores.get(item, 0.0) + weights.date
        first_seen.setdefault(item, len(first_seen))
    if next_in_conversation is not None and weights.next_in_conversation > 0:
        _pass_to_next(scores, first_seen, next_in_conversation, weights)
    if prior is not None and scores:
        factors = prior(list(scores)).tolist()
        scores = {item: score * f for (item, score), f in zip(scores.items(), factors, strict=True)}
    return _ordered(scores, first_seen, limit, hotness)


def _pass_to_next(
    scores: dict[int, float],
    first_seen: dict[int, int],
    next_in_conversation: Callable[[int], int | None],
    weights: FusionWeights,
) -> None:
    # From the scores before any share is passed: a chain of three does not carry the first
    # one's score to the third.
    best = sorted(scores.items(), key=lambda pair: (-pair[1], first_seen[pair[0]]))
    for item, score in best[: weights.conversation_sources]:
        following = next_in_conversation(item)
        if following is not None and score > 0:
            scores[following] = scores.get(following, 0.0) + weights.next_in_conversation * score
            first_seen.setdefault(following, len(first_seen))


def lexical_confidence(coverage: float, weights: FusionWeights = DEFAULT_WEIGHTS) -> float:
    """BM25's weight for one query: 1 when its best match holds enough of the query, less when
    it matched a word or two of a longer question (a paraphrase the embedding reads better)."""
    if weights.lexical_coverage <= 0:
        return 1.0
    return min(1.0, max(coverage, 0.0) / weights.lexical_coverage)


def embedding_weight(
    lexical: Sequence[tuple[int, float]],
    semantic: Sequence[tuple[int, float]],
    weights: FusionWeights = DEFAULT_WEIGHTS,
) -> float:
    """The embedding side's weight for one query: 0 (dropped) without a close memory or with a
    flat similarity profile, up to `weights.embedding` when its best stands out."""
    if not semantic or weights.embedding <= 0:
        return 0.0
    cosines = [cosine for _, cosine in semantic]
    depth = min(weights.margin_depth, len(cosines)) - 1
    # Fewer close memories than the depth: the cut-off itself is the comparison.
    reference = cosines[depth] if len(cosines) > weights.margin_depth else min(
        cosines[-1], weights.cosine_floor)  # fmt: skip
    margin = cosines[0] - reference
    confidence = min(1.0, max(margin, 0.0) / weights.confident_margin)
    if weights.lexical_gap > 0 and len(lexical) > 1:
        first, second = sorted((score for _, score in lexical), reverse=True)[:2]
        confidence *= 1.0 - weights.lexical_gap * (first - second) / first if first > 0 else 1.0
    return weights.embedding * confidence


def _ordered(
    scores: dict[int, float],
    first_seen: dict[int, int],
    limit: int,
    hotness: HotnessOf | None,
    digits: int = 9,
) -> list[int]:
    # Rounded: the same sum whatever the order of the additions (1/6 + 1/8 and 1/8 + 1/6).
    rounded = {item: round(score, digits) for item, score in scores.items()}
    hot: dict[int, float] = {}
    if hotness is not None:
        sharing = Counter(rounded.values())
        tied = [item for item, score in rounded.items() if sharing[score] > 1]
        hot = dict(zip(tied, hotness(tied), strict=True)) if tied else {}
    ordered = sorted(
        rounded, key=lambda item: (-rounded[item], -hot.get(item, 0.0), first_seen[item])
    )
    return ordered[:limit]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]],
    limit: int,
    k: int = RRF_K,
    hotness: HotnessOf | None = None,
) -> list[int]:
    """Items of `rankings` ordered by the sum of 1 / (k + rank); ties go to the hotter item
    (`hotness(items)`, asked only about tied items), then keep the earlier ranking's order
    (BM25 first)."""
    scores: dict[int, float] = {}
    first_seen: dict[int, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
            first_seen.setdefault(item, len(first_seen))
    return _ordered(scores, first_seen, limit, hotness, digits=12)


class RecallChannel(Protocol):
    """A ranking by meaning: vectors kept beside the store (`SemanticChannel`) or the store's
    own index (`StoreIndexChannel`)."""

    model: str

    def similar(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = ...
    ) -> list[int]: ...

    def similar_scores(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = ...
    ) -> list[tuple[int, float]]: ...

    def catch_up(
        self, index: Bm25Index, max_missing: int = ..., timeout: float | None = ...
    ) -> bool: ...

    def status(self) -> ChannelStatus | None: ...


class FusedRanking:
    """The ranking `MechanicalRetriever.rank` uses when a semantic channel is on."""

    def __init__(self, channel: RecallChannel, weights: FusionWeights = DEFAULT_WEIGHTS) -> None:
        self.channel = channel
        self.weights = weights
        self._failing = False

    def __call__(
        self,
        index: Bm25Index,
        reading: QueryReading,
        query: str,
        limit: int,
        *,
        hotness: HotnessOf | None = None,
        min_score: float = 0.0,
    ) -> list[int]:
        """Positions in `index`, best first: BM25's and the channel's shortlists and the
        memories written on a day the query names, fused by `fuse_scores`; without the channel
        while it fails (an embedding provider down never breaks retrieval). `min_score` thins
        BM25's shortlist (the channel has its own similarity floor); ties go to the hotter
        memory (`hotness(positions)`)."""
        depth = max(limit, SHORTLIST)
        lexical = lexical_shortlist(index, reading, depth, min_score)
        try:
            semantic = self.channel.similar_scores(index, self.embedded_query(query), depth)
        except Exception:
            if not self._failing:  # once per outage, not once per query
                logger.exception("semantic recall with %s failed; using BM25 alone",
                                 self.channel.model)  # fmt: skip
            self._failing = True
            semantic = []
        else:
            if self._failing:
                logger.warning("semantic recall with %s works again", self.channel.model)
                self._failing = False
        dated = dated_shortlist(index, reading, depth, (lexical, semantic))
        if not semantic and not dated:
            return index.search(reading.tokens, limit, favour_recent=reading.time_cue,
                                newest_first=reading.current, hotness=hotness,
                                min_score=min_score)  # fmt: skip
        coverage = best_coverage(index, reading, lexical, self.weights)
        word = self.weights.wordless_lexical == 1.0 or shares_word(index, reading, lexical)
        return fuse_scores(lexical, semantic, limit, dated=dated, weights=self.weights,
                           hotness=hotness, lexical_coverage=coverage, lexical_word=word,
                           next_in_conversation=index.next_in_conversation,
                           prior=partial(self.prior, index, reading))  # fmt: skip

    def embedded_query(self, query: str) -> str:
        """The text the channel embeds for `query` (`as_statement`)."""
        return as_statement(query)

    def prior(
        self, index: Bm25Index, reading: QueryReading, items: list[int]
    ) -> npt.NDArray[np.float64]:
        """A factor per candidate: the newer answers first for a question about the current
        value (`Bm25Index.newness`; BM25's shortlist already carries it, and the fused score
        takes it again so that what the embedding adds follows it too), a memory that only
        asks a question lower."""
        factors = index.newness(items) if reading.current else np.ones(len(items))
        if self.weights.bare_question != 1.0:
            asks = [index.entries[item].only_asks for item in items]
            factors = factors * np.where(asks, self.weights.bare_question, 1.0)
        if reading.advice and self.weights.preference_for_advice != 1.0:
            tastes = [index.entries[item].states_preference for item in items]
            factors = factors * np.where(tastes, self.weights.preference_for_advice, 1.0)
        return factors


def lexical_shortlist(
    index: Bm25Index, reading: QueryReading, depth: int, min_score: float = 0.0
) -> list[tuple[int, float]]:
    """BM25's `depth` best `(position, score)`, without those under `min_score` of the best."""
    candidates, scores = index.scored(reading.tokens, reading.time_cue, reading.current)
    if not len(scores):
        return []
    if min_score > 0:
        strong = scores >= min_score * scores.max()
        candidates, scores = candidates[strong], scores[strong]
    if len(scores) > depth:
        keep = np.argpartition(-scores, depth - 1)[:depth]
        candidates, scores = candidates[keep], scores[keep]
    return list(zip(candidates.tolist(), scores.tolist(), strict=True))


def dated_shortlist(
    index: Bm25Index,
    reading: QueryReading,
    depth: int,
    shortlists: Sequence[Sequence[tuple[int, float]]] = (),
) -> list[int]:
    """The memories written on a day the query names: every one in `shortlists` (BM25's and
    the embedding's), so the day counts for each candidate, plus the `depth` most recent."""
    positions = index.written_on(reading.dates)
    if len(positions) <= depth:
        return positions.tolist()
    # More than `depth` that day (other topics, or many users in one store): an arbitrary cut
    # by time would drop the candidates that match the question best.
    on_day = set(positions.tolist())
    listed = [p for shortlist in shortlists for p, _ in shortlist if p in on_day]
    recent = positions[np.argsort(-index.updated_at[positions], kind="stable")[:depth]]
    return list(dict.fromkeys([*listed, *recent.tolist()]))


def best_coverage(
    index: Bm25Index,
    reading: QueryReading,
    lexical: Sequence[tuple[int, float]],
    weights: FusionWeights = DEFAULT_WEIGHTS,
) -> float:
    """How much of the query BM25's best match holds (1.0 when the weights do not use it)."""
    if weights.lexical_coverage <= 0 or not lexical:
        return 1.0
    best = max(lexical, key=lambda pair: pair[1])[0]
    return index.coverage(reading.tokens, best)


def shares_word(
    index: Bm25Index, reading: QueryReading, lexical: Sequence[tuple[int, float]]
) -> bool:
    """Whether BM25's best match shares a word with the query (`Bm25Index.shares_word`)."""
    if not lexical:
        return True
    best = max(lexical, key=lambda pair: pair[1])[0]
    return index.shares_word(reading.tokens, best)
