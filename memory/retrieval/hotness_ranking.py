"""Hotness of a BM25 index's memories, as one array: it orders ties and broad questions."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.hotness import (
    DISTINCT_QUERY_WEIGHT,
    HIT_WEIGHT,
    NEVER_RECALLED,
    RECALL_WEIGHT,
    STALE_FACTOR,
    RecallStats,
    hotness,
    is_cold,
)
from memory.retrieval.ranking import DEFAULT_HALF_LIFE_DAYS, Ranking, RecallSource, no_recalls
from memory.store.item import MemoryItem, parse_time

# Hotness changes with the clock only by decay (days): computing it again every minute is plenty.
REFRESH_SECONDS = 60.0

Floats = npt.NDArray[np.float64]


class HotnessRanking(Ranking):
    """`memory.retrieval.hotness.hotness` for every position of an index at once (numpy), cached
    until the index, the recall stats (`recall_stats()` returns the same mapping while nothing was
    flushed) or the minute change. The per-memory parts (hits, episodic or not) are computed once
    per index."""

    def __init__(
        self,
        recall_stats: RecallSource = no_recalls,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
    ) -> None:
        super().__init__(recall_stats, half_life_days)
        self._static: tuple[tuple[str, int], Floats, npt.NDArray[np.bool_], Floats] | None = None
        self._values: tuple[tuple[object, ...], Mapping[str, RecallStats], Floats] | None = None
        self._broad: dict[bool, tuple[Floats, list[int]]] = {}  # time cue → (hotness, order)

    def of(self, memory_id: str, item: MemoryItem, now: datetime | None = None) -> float:
        """`memory.retrieval.hotness.hotness` of one memory, with its recall statistics."""
        recall = self.recall_stats().get(memory_id, NEVER_RECALLED)
        return hotness(item, recall, now=now, half_life_days=self.half_life_days)

    def is_cold(self, value: float) -> bool:
        return is_cold(value)

    def values(self, index: Bm25Index, now: float | None = None) -> Floats:
        """Hotness by position (dead positions included, never read) at epoch `now`."""
        stats = self.recall_stats()
        moment = time.time() if now is None else now
        key = (index.revision, index.generation, self.half_life_days,
               None if now is not None else int(moment // REFRESH_SECONDS))  # fmt: skip
        cached = self._values
        if now is None and cached is not None and cached[0] == key and cached[1] is stats:
            return cached[2]
        hits, episodic, stale_since = self._per_memory(index)
        recalls, queries = np.zeros(index.count), np.zeros(index.count)
        last = index.updated_at[: index.count].copy()
        for memory_id, recall in stats.items():
            position = index.positions.get(memory_id)
            if position is None or position >= index.count or not index.alive[position]:
                continue
            recalls[position], queries[position] = max(recall.recalls, 0), max(recall.queries, 0)
            recalled = parse_time(recall.last_recalled)
            if recalled is not None:
                last[position] = max(last[position], recalled.timestamp())
        use = 1.0 + np.log1p(HIT_WEIGHT * hits + RECALL_WEIGHT * recalls
                             + DISTINCT_QUERY_WEIGHT * queries)  # fmt: skip
        if self.half_life_days > 0:
            # No readable time (0) means age 0, as in memory.retrieval.hotness.age_days.
            age_days = np.where(last > 0, np.maximum(moment - last, 0.0) / 86400.0, 0.0)
            use = np.where(episodic, use * np.power(0.5, age_days / self.half_life_days), use)
        use = np.where((stale_since > 0) & (moment >= stale_since), use * STALE_FACTOR, use)
        self._values = (key, stats, use)
        return use

    def _per_memory(self, index: Bm25Index) -> tuple[Floats, npt.NDArray[np.bool_], Floats]:
        key = (index.revision, index.generation)
        if self._static is None or self._static[0] != key:
            entries = index.entries
            hits = np.fromiter((max(entries[p].hit, 0) for p in range(index.count)),
                               dtype=np.float64, count=index.count)  # fmt: skip
            episodic = np.fromiter((entries[p].episodic for p in range(index.count)),
                                   dtype=bool, count=index.count)  # fmt: skip
            stale_since = np.fromiter((entries[p].stale_since for p in range(index.count)),
                                      dtype=np.float64, count=index.count)  # fmt: skip
            self._static = (key, hits, episodic, stale_since)
        return self._static[1], self._static[2], self._static[3]

    def broad_order(self, index: Bm25Index, time_cue: bool) -> list[int]:
        """Live positions for a broad question. "Who am I?" and small talk: hottest first (an
        evergreen fact used for months leads). "What's new?" (a time cue): the person asks
        for recent things, so hotness (min-max scaled) is added to the recency rank (scaled),
        the way hits were before hotness: recent and much-used both count, and an old plan
        fades by its own decay."""
        hot = self.values(index)
        cached = self._broad.get(time_cue)
        if cached is not None and cached[0] is hot:
            return cached[1]
        order = self._broad_order(index, hot, time_cue)
        self._broad[time_cue] = (hot, order)
        return order

    @staticmethod
    def _broad_order(index: Bm25Index, hot: Floats, time_cue: bool) -> list[int]:
        live = np.flatnonzero(index.alive)
        if not len(live):
            return []
        updated = index.updated_at[live]
        # Oldest first, then by position: the recency rank, and the order equals keep.
        live = live[np.argsort(updated, kind="stable")]
        updated, heat = index.updated_at[live], hot[live]
        if time_cue:
            low, high = float(heat.min()), float(heat.max())
            spread = high - low if high > low else 1.0
            recency = np.arange(len(live)) / max(len(live) - 1, 1)
            heat = recency + (heat - low) / spread
        # lexsort: the last key first; stable, so equals keep the oldest-first order above.
        return [int(p) for p in live[np.lexsort((-updated, -heat))]]

    def at(self, index: Bm25Index, positions: list[int]) -> list[float]:
        """The hotness of a few positions (the tied ones of a ranking), by the scalar formula:
        no work for the rest of the index."""
        stats, now, entries = self.recall_stats(), datetime.now(UTC), index.entries
        return [
            hotness(entries[p], stats.get(entries[p].id, NEVER_RECALLED), now=now,
                    half_life_days=self.half_life_days)
            for p in positions
        ]  # fmt: skip

    def hottest_first(self, index: Bm25Index, positions: list[int]) -> list[int]:
        """`positions` by hotness, the given order kept between equals."""
        hot = dict(zip(positions, self.at(index, positions), strict=True))
        return sorted(positions, key=lambda p: -hot[p])
