"""MemoryUpkeep: what keeps one user's memory clean over time (recalls, hotness)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from memory.retrieval import Retrievers
from memory.retrieval.bm25 import RANKING
from memory.retrieval.ranking import Ranking
from memory.retrieval.recall_log import RecallLog, RecallStats
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager

if TYPE_CHECKING:
    from datetime import datetime

    from memory.upkeep.upkept import UpkeptMemory


class MemoryUpkeep:
    """`LongTermMemory`'s upkeep methods, kept apart so the reading and writing doors stay short:
    recall signals and hotness (`memory.retrieval.hotness`); topics are `memory.upkeep.topical`'s,
    consolidation passes `memory.upkeep.consolidating`'s. `ranking_type` is retrieval's (`RANKINGS`:
    hotness, when it is there)."""

    ranking_type: type[Ranking] = RANKING

    manager: BaseMemoryManager
    retrievers: Retrievers
    recall_log: RecallLog
    data_dir: Path
    _open_lock: threading.Lock

    @property
    def _memory(self) -> UpkeptMemory:
        """This object as the `LongTermMemory` it is part of (the passes take the whole door)."""
        return cast("UpkeptMemory", self)

    # ── recall signals and hotness ──────────────────────────────────────

    def record_recall(self, memory_ids: Iterable[str], query: str) -> int:
        """Note that `memory_ids` were injected into a reply to `query`; returns how many. Only
        queued in memory (the reply path never waits for a file): a batch is written in one
        transaction a moment later, at `close()`, or at the process's normal exit."""
        return self.recall_log.record(memory_ids, query)

    def recall_stats(self) -> dict[str, RecallStats]:
        """How often each memory id was recalled, for how many distinct queries, and when last
        (what is still queued is written first)."""
        self.recall_log.flush()
        return dict(self.recall_log.stats())

    @property
    def ranking(self) -> Ranking:
        """What orders retrieval's ties and broad questions (an instance of `ranking_type`)."""
        return self.retrievers.mechanical.hotness

    def hotness(
        self, now: datetime | None = None, items: Mapping[str, MemoryItem] | None = None
    ) -> dict[str, float]:
        """Every live memory's hotness (or of `items`) by id at `now` (default: the current time),
        with this memory's half-life (see `memory.retrieval.hotness.hotness`; 1.0 each without
        hotness)."""
        self.recall_log.flush()  # what is still queued counts
        return self.ranking.heat(items if items is not None else self.manager.list_items(), now)

    @property
    def half_life_days(self) -> float:
        """Days in which an unused episodic memory loses half its hotness (0: no decay)."""
        return self.ranking.half_life_days

    @half_life_days.setter
    def half_life_days(self, days: float) -> None:
        self.ranking.half_life_days = days

    @property
    def min_score(self) -> float:
        """Ranked matches below this fraction of the best one are dropped (0: none are)."""
        return self.retrievers.mechanical.min_score

    @min_score.setter
    def min_score(self, fraction: float) -> None:
        if not 0 <= fraction < 1:
            raise ValueError(f"min_score must be in [0, 1), not {fraction!r}")
        self.retrievers.mechanical.min_score = fraction

    def close(self) -> None:
        """Write the queued recalls and close the recall log (it reopens when used again)."""
        self.recall_log.close()
