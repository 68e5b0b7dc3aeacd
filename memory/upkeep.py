"""MemoryUpkeep: what keeps one user's memory clean over time (recalls, hotness)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from memory.hotness import NEVER_RECALLED, RecallStats, hotness
from memory.manager import BaseMemoryManager
from memory.recall_log import RecallLog
from memory.retrieval import Retrievers

if TYPE_CHECKING:
    from datetime import datetime

    from memory.long_term import LongTermMemory


class MemoryUpkeep:
    """`LongTermMemory`'s upkeep methods, kept apart so the reading and writing doors stay short:
    recall signals and hotness (`memory.hotness`); topics are `memory.topical`'s, consolidation
    passes `memory.consolidating`'s."""

    manager: BaseMemoryManager
    retrievers: Retrievers
    recall_log: RecallLog
    data_dir: Path
    _open_lock: threading.Lock

    @property
    def _memory(self) -> LongTermMemory:
        """This object as the `LongTermMemory` it is part of (the passes take the whole door)."""
        return cast("LongTermMemory", self)

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

    def hotness(self, now: datetime | None = None) -> dict[str, float]:
        """Every live memory's hotness by id at `now` (default: the current time), with this
        memory's half-life (see `memory.hotness.hotness`)."""
        stats, half_life = self.recall_stats(), self.half_life_days
        return {
            memory_id: hotness(item, stats.get(memory_id, NEVER_RECALLED), now=now,
                               half_life_days=half_life)
            for memory_id, item in self.manager.list_items().items()
        }  # fmt: skip

    @property
    def half_life_days(self) -> float:
        """Days in which an unused episodic memory loses half its hotness (0: no decay)."""
        return self.retrievers.mechanical.hotness.half_life_days

    @half_life_days.setter
    def half_life_days(self, days: float) -> None:
        self.retrievers.mechanical.hotness.half_life_days = days

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
