"""Fusing BM25 with the semantic channel: reciprocal rank fusion over both shortlists."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from memory.retrieval.bm25_index import Bm25Index, HotnessOf
from memory.retrieval.query import QueryReading

if TYPE_CHECKING:
    from memory.retrieval.semantic import ChannelStatus

logger = logging.getLogger(__name__)

# Measured with bench/semantic_recall.py against weighted scores, a BM25 shortlist re-ranked by
# cosine and weighting by BM25's confidence: RRF with a small k was never below BM25 on the
# lexical cases and gained most on paraphrases, with 2,000 distractors as without them. A small
# k lets one channel's clear first place win; a large one (60) blurs it.
RRF_K = 5
SHORTLIST = 50  # how deep each channel is read before fusing


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
    # Rounded: 1/6 + 1/8 and 1/8 + 1/6 are one score whatever the order of the additions.
    rounded = {item: round(score, 12) for item, score in scores.items()}
    hot: dict[int, float] = {}
    if hotness is not None:
        sharing = Counter(rounded.values())
        tied = [item for item, score in rounded.items() if sharing[score] > 1]
        hot = dict(zip(tied, hotness(tied), strict=True)) if tied else {}
    ordered = sorted(
        rounded, key=lambda item: (-rounded[item], -hot.get(item, 0.0), first_seen[item])
    )
    return ordered[:limit]


class RecallChannel(Protocol):
    """A ranking by meaning: vectors kept beside the store (`SemanticChannel`) or the store's
    own index (`StoreIndexChannel`)."""

    model: str

    def similar(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = ...
    ) -> list[int]: ...

    def catch_up(
        self, index: Bm25Index, max_missing: int = ..., timeout: float | None = ...
    ) -> bool: ...

    def status(self) -> ChannelStatus | None: ...


class FusedRanking:
    """The ranking `MechanicalRetriever.rank` uses when a semantic channel is on."""

    def __init__(self, channel: RecallChannel) -> None:
        self.channel = channel
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
        """Positions in `index`, best first: BM25's and the channel's shortlists fused; BM25's
        alone while the channel fails (an embedding provider down never breaks retrieval).
        `min_score` thins BM25's shortlist (the channel has its own similarity floor); ties go
        to the hotter memory (`hotness(positions)`)."""
        depth = max(limit, SHORTLIST)
        lexical = index.search(reading.tokens, depth, favour_recent=reading.time_cue,
                               hotness=hotness, min_score=min_score)  # fmt: skip
        try:
            semantic = self.channel.similar(index, query, depth)
        except Exception:
            if not self._failing:  # once per outage, not once per query
                logger.exception("semantic recall with %s failed; using BM25 alone",
                                 self.channel.model)  # fmt: skip
            self._failing = True
            return lexical[:limit]
        if self._failing:
            logger.warning("semantic recall with %s works again", self.channel.model)
            self._failing = False
        if not semantic:
            return lexical[:limit]
        return reciprocal_rank_fusion([lexical, semantic], limit, hotness=hotness)
