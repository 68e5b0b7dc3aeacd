"""LongTermMemory's hotness door (`memory.hotness`): a mixin, deleted with the feature."""

from __future__ import annotations

from memory.ranking import Ranking
from memory.retrieval.hotness_ranking import HotnessRanking


class Hot:
    """Ranks by hotness (hits, recalls and age): ties and broad questions, the editor's
    hottest-first order and cold badge, and what consolidation archives as cold."""

    ranking_type: type[Ranking] = HotnessRanking
