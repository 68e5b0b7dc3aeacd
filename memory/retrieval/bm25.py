"""MechanicalRetriever: BM25 without a model, the index rebuilt only when the store changes."""

from __future__ import annotations

import logging
import threading
from datetime import date
from functools import partial
from typing import TYPE_CHECKING

from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.hotness_ranking import HotnessRanking  # feature: hotness
from memory.retrieval.query import QueryReading, read_query
from memory.retrieval.ranking import Ranking
from memory.store.branch import Lineage, LineageFilter, filter_ranked, overfetch_k
from memory.store.manager import BaseMemoryManager

if TYPE_CHECKING:
    from memory.retrieval.fusion import FusedRanking

logger = logging.getLogger(__name__)

# What orders ties and broad questions, the editor's hottest-first and what consolidation finds
# cold: the first of these (hits, recalls and age when hotness is there; else the plain ranking,
# under which ties keep their order and broad questions go newest first).
RANKINGS: tuple[type[Ranking], ...] = (
    HotnessRanking,  # feature: hotness
    Ranking,
)
RANKING = RANKINGS[0]


class MechanicalRetriever:
    """BM25 retrieval with a Chinese/English tokenizer; ties and broad queries go by `hotness`
    (a `RANKING`; LongTermMemory passes one that reads its recall log).

    Usage::

        retriever = MechanicalRetriever(manager)
        retriever.retrieve("塔罗牌重构")  # [{id, description, theme, ...}, ...] best first
    """

    def __init__(
        self,
        manager: BaseMemoryManager,
        *,
        hotness: Ranking | None = None,
        min_score: float = 0.0,
    ) -> None:
        self.manager = manager
        # Orders equal scores and broad questions; without recall stats it reads hits and age.
        self.hotness = hotness if hotness is not None else RANKING()
        # Matches scoring below this fraction of the best one are dropped (0: none are).
        self.min_score = min_score
        self.builds = 0  # indexes made, one per revision seen (tests and benchmarks read it)
        self._index: Bm25Index | None = None
        self._visible: tuple[tuple[str, Lineage], LineageFilter] | None = None
        self._lock = threading.Lock()
        # With a semantic channel on (memory.retrieval.fusion), topic queries are ranked by it.
        self.fused: FusedRanking | None = None

    def index(self) -> Bm25Index:
        """The index for the store's current revision; built at most once per revision."""
        revision = self.manager.change_token()
        index = self._index
        if index is not None and index.revision == revision:
            return index
        with self._lock:
            index = self._index
            if index is None or index.revision != revision:
                # What was written since: from the manager's change feed when it has one (the
                # store is not read again), else by comparing every item with the index.
                delta = self.manager.changes_since(index.revision) if index else None
                if index is not None and delta is not None:
                    index = index.with_changes(*delta)
                elif index is None:
                    index = Bm25Index.build(revision, self.manager.list_items())
                else:  # only what changed since the last revision is tokenized again
                    index = index.updated(revision, self.manager.list_items())
                self._index = index
                self.builds += 1
                logger.debug("built BM25 index of %d memories at revision %s", index.size, revision)
        return index

    def visible(self, lineage: Lineage) -> LineageFilter:
        """Which live ids a run with `lineage` may read (`id in visible`), computed once per store
        revision and lineage from the branch items alone."""
        key = (self.manager.change_token(), lineage)
        cached = self._visible
        if cached is not None and cached[0] == key:
            return cached[1]
        visible = LineageFilter(self.manager.branch_items(), lineage)
        self._visible = (key, visible)
        return visible

    def retrieve(self, query: str, limit: int = 10, lineage: Lineage | None = None) -> list[dict]:
        """Memories related to `query` as `{id, description, theme, created_time,
        latest_update_time}`, most relevant first.

        With a `lineage`, only memories that run may read: the ranking over-fetches
        (`overfetch_k(limit)` candidates), then keeps the visible ones in rank order.
        """
        if not isinstance(query, str) or not query.strip() or limit <= 0:
            return []
        index = self.index()
        if not index.size:
            return []
        if lineage is None:
            return [index.entries[i].as_result() for i in self.rank(index, query, limit)]
        positions = self.rank_visible(index, query, limit, lineage)
        return [index.entries[i].as_result() for i in positions]

    def coming_up(
        self, today: date, days: int, limit: int, lineage: Lineage | None = None
    ) -> list[dict[str, str]]:
        """The memories naming a day from `today` through `days` after it, soonest first, that
        a run with `lineage` may read: retrieval's shape plus `day` (ISO)."""
        index = self.index()
        if limit <= 0 or days < 0 or not index.size:
            return []
        visible = self.visible(lineage) if lineage is not None else None
        found = []
        for day, position in index.planned_between(today.toordinal(), today.toordinal() + days):
            entry = index.entries[position]
            if visible is None or entry.id in visible:
                found.append({**entry.as_result(), "day": date.fromordinal(day).isoformat()})
                if len(found) >= limit:
                    break
        return found

    def rank_visible(self, index: Bm25Index, query: str, limit: int, lineage: Lineage) -> list[int]:
        """`rank` restricted to what `lineage` may read, rank order kept.

        When the over-fetched window holds fewer than `limit` visible memories and the ranking
        goes on, the window widens, so the result equals filtering the whole ranking.
        """
        visible = self.visible(lineage)
        window = overfetch_k(limit)
        while True:
            positions = self.rank(index, query, window)
            by_id = {index.entries[i].id: i for i in positions}
            kept = filter_ranked(by_id, visible, limit)
            if len(kept) >= limit or len(positions) < window or window >= index.size:
                return [by_id[memory_id] for memory_id in kept]
            window *= 4

    def search(self, query: str, limit: int = 50) -> list[str]:
        """Ids of the memories that contain `query` (case-insensitive), then those BM25 ranks for
        it; never the recent and much-used ones that a broad question gets (a search box shows
        what matches, or nothing)."""
        if not isinstance(query, str) or not query.strip() or limit <= 0:
            return []
        index = self.index()
        needle = query.strip().casefold()
        literal = [
            entry.id
            for entry in index.live_entries()
            if needle in entry.description.casefold() or needle in entry.theme.casefold()
        ]
        reading = read_query(query, index.theme_keys)
        ranked = index.search(reading.tokens, limit, favour_recent=reading.time_cue,
                              newest_first=reading.current)  # fmt: skip
        return list(dict.fromkeys(literal + [index.entries[i].id for i in ranked]))[:limit]

    def rank(self, index: Bm25Index, query: str, limit: int, broad: bool = True) -> list[int]:
        """Positions in `index`, best first: BM25 (fused with the semantic channel when it is on)
        without matches below `min_score` of the best, equal scores hottest first; or (unless
        `broad` is False) the broad order for broad queries and bare theme names (see
        `Ranking.broad_order`)."""
        reading = read_query(query, index.theme_keys)
        # A question about a day ("明天…", "on Friday") brings what is planned that day first.
        planned = index.planned_on(reading.days)
        if len(planned) > limit:  # a busy day: its plans that match the question best first
            candidates, scores = index.scored(reading.tokens)
            score_of = dict(zip(candidates.tolist(), scores.tolist(), strict=True))
            planned.sort(key=lambda position: -score_of.get(position, 0.0))
        return planned_first(planned, self._ranked(index, reading, query, limit, broad), limit)

    def _ranked(
        self, index: Bm25Index, reading: QueryReading, query: str, limit: int, broad: bool
    ) -> list[int]:
        if broad and reading.theme_key is not None:
            return self.hotness.hottest_first(index, index.themes[reading.theme_key])[:limit]
        if broad and reading.broad and not (reading.meaning_only and self.fused is not None):
            return self.hotness.broad_order(index, reading.time_cue)[:limit]
        hotness = partial(self.hotness.at, index)
        if self.fused is not None:
            fused = self.fused(index, reading, query, limit, hotness=hotness,
                               min_score=self.min_score)  # fmt: skip
            # A question only meaning answers, the embedding down: the broad order after all.
            if fused or not (broad and reading.broad):
                return fused
            return self.hotness.broad_order(index, reading.time_cue)[:limit]
        return index.search(reading.tokens, limit, favour_recent=reading.time_cue,
                            newest_first=reading.current, hotness=hotness,
                            min_score=self.min_score)  # fmt: skip


def planned_first(planned: list[int], ranked: list[int], limit: int) -> list[int]:
    """The memories planned on the day asked about, those the ranking also found first (in its
    order), then the ranking's others; `limit` in all."""
    if not planned:
        return ranked[:limit]
    on_day = set(planned)
    matched = [position for position in ranked if position in on_day]
    return list(dict.fromkeys([*matched, *planned, *ranked]))[:limit]
