"""StoreIndexChannel: semantic recall through a LangGraph store's own vector index."""

from __future__ import annotations

import logging
from typing import Any

from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.semantic import MIN_SIMILARITY

logger = logging.getLogger(__name__)


def store_index_of(store: Any) -> dict[str, Any] | None:
    """The index configuration of a LangGraph store (langgraph.json's `store.index`, or
    `InMemoryStore(index=...)`), looking through the server's per-loop wrappers; None without."""
    seen: set[int] = set()
    while store is not None and id(store) not in seen:
        seen.add(id(store))
        config = getattr(store, "index_config", None)
        if config:
            return dict(config)
        store = getattr(store, "_store", None)
    return None


class StoreIndexChannel:
    """The semantic channel of the `store` backend when its store embeds what is put in it:
    the store keeps the vectors (in Postgres on LangGraph Platform), so nothing is kept beside
    it and nothing is embedded here; a query is the store's own similarity search."""

    def __init__(self, store: Any, namespace: tuple[str, ...], model: str) -> None:
        self.store = store
        self.namespace = namespace
        self.model = model
        self.embedded_count = 0  # the store embeds on put: this channel never does

    def similar(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = MIN_SIMILARITY
    ) -> list[int]:
        """Positions in `index` of the live memories the store finds closest to `query`, best
        first, at least `min_similarity` close (tombstones are not in `index`: left out)."""
        return [position for position, _ in self.similar_scores(index, query, depth,
                                                                 min_similarity)]  # fmt: skip

    def similar_scores(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = MIN_SIMILARITY
    ) -> list[tuple[int, float]]:
        """`similar` with the store's similarity score of each: `(position, score)`."""
        if depth <= 0:
            return []
        found = self.store.search(self.namespace, query=query, limit=depth + len(index.entries))
        positions = []
        for hit in found:
            position = index.positions.get(hit.key)
            if position is None or hit.score is None or hit.score < min_similarity:
                continue
            positions.append((position, float(hit.score)))
            if len(positions) >= depth:
                break
        return positions

    def wait(self, timeout: float | None = None) -> bool:
        return True  # nothing is made in the background

    def catch_up(self, index: Bm25Index, max_missing: int = 0,
                 timeout: float | None = None) -> bool:  # fmt: skip
        return True  # the store embeds on put

    def status(self) -> None:
        return None  # the store's own index: nothing to report from here
