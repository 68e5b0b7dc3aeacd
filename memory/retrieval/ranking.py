"""Ranking: what orders retrieval's ties and broad questions, and how alive each memory is."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from memory.retrieval.recall_log import RecallStats

if TYPE_CHECKING:
    from memory.retrieval.bm25_index import Bm25Index
    from memory.store.item import MemoryItem

# Days in which an unused episodic memory loses half its hotness: here, not in
# memory.retrieval.hotness, so that settings and passes name it whether or not hotness is there.
DEFAULT_HALF_LIFE_DAYS = 30.0

RecallSource = Callable[[], Mapping[str, RecallStats]]


def no_recalls() -> Mapping[str, RecallStats]:
    return {}


class Ranking:
    """The order without hotness (`memory.retrieval.hotness_ranking.HotnessRanking` is the one
    with it; `memory.retrieval.bm25.RANKINGS` picks the one in use): every memory is as alive
    as a fresh one (1.0) and none is cold, so ties keep their order (then the newer first) and
    broad questions go newest first. `recall_stats` and `half_life_days` are kept for a ranking
    that reads them."""

    def __init__(
        self,
        recall_stats: RecallSource = no_recalls,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
    ) -> None:
        self.recall_stats = recall_stats
        self.half_life_days = half_life_days

    def of(self, memory_id: str, item: MemoryItem, now: datetime | None = None) -> float:
        """How alive one memory is at `now` (default: the current time)."""
        return 1.0

    def heat(
        self, items: Mapping[str, MemoryItem], now: datetime | None = None
    ) -> dict[str, float]:
        """`of` for each of `items`, by id."""
        return {memory_id: self.of(memory_id, item, now) for memory_id, item in items.items()}

    def is_cold(self, value: float) -> bool:
        """Whether a value of `of` counts as cold (the editor's badge; consolidation archives
        what stayed cold)."""
        return False

    def at(self, index: Bm25Index, positions: list[int]) -> list[float]:
        """How alive the memories at a few positions of `index` are (the tied ones of a ranking)."""
        return [1.0] * len(positions)

    def hottest_first(self, index: Bm25Index, positions: list[int]) -> list[int]:
        """`positions` by how alive they are, the given order kept between equals."""
        return list(positions)

    def broad_order(self, index: Bm25Index, time_cue: bool) -> list[int]:
        """Live positions for a broad question ("who am I?", "what's new?"): newest first."""
        live = np.flatnonzero(index.alive)
        newest = np.argsort(-index.updated_at[live], kind="stable")
        return [int(p) for p in live[newest]]
