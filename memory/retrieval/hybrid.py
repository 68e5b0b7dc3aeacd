"""HybridRetriever: under a budget the LLM sees every memory; above it, only BM25's candidates."""

from __future__ import annotations

import logging
from typing import Any

from memory.prompts.writer import Sections
from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.llm import LLMRetriever
from memory.retrieval.modes import OnFailure
from memory.store.branch import Lineage
from memory.store.manager import BaseMemoryManager

logger = logging.getLogger(__name__)

DEFAULT_MAX_ITEMS = 200
DEFAULT_MAX_CHARS = 20_000


class HybridRetriever:
    """LLM retrieval that keeps working at 10,000 memories.

    When the store holds more than `max_items` memories or `max_chars` characters, BM25 picks
    `candidates` memories, the `extra_recent` most recent and the `extra_hit` most used are added
    (broad queries need them, and BM25 misses paraphrases), and only those go to the model.
    """

    def __init__(
        self,
        manager: BaseMemoryManager,
        llm: Any,
        *,
        mechanical: MechanicalRetriever | None = None,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_chars: int = DEFAULT_MAX_CHARS,
        candidates: int = 40,
        extra_recent: int = 5,
        extra_hit: int = 5,
        language: str = "en",
        on_failure: OnFailure = "mechanical",
        sections: Sections | None = None,
    ) -> None:
        self.manager = manager
        self.llm = llm
        self.mechanical = mechanical or MechanicalRetriever(manager)
        self.llm_retriever = LLMRetriever(
            manager, llm, fallback=self.mechanical, language=language, on_failure=on_failure,
            sections=sections,
        )  # fmt: skip
        self.max_items = max_items
        self.max_chars = max_chars
        self.candidates = candidates
        self.extra_recent = extra_recent
        self.extra_hit = extra_hit

    def retrieve(self, query: str, limit: int = 10, lineage: Lineage | None = None) -> list[dict]:
        """Memories related to `query` as `{id, description, theme, created_time,
        latest_update_time}`, most relevant first.

        With a `lineage`, only memories that run may read are candidates (and shown).
        """
        if not isinstance(query, str) or not query.strip() or limit <= 0:
            return []
        index = self.mechanical.index()
        visible = None if lineage is None else self.mechanical.visible(lineage)
        if index.size <= self.max_items and index.total_chars <= self.max_chars:
            entries = index.live_entries()
            if visible is not None:
                entries = [entry for entry in entries if entry.id in visible]
            return self.llm_retriever.select(query, entries, limit, lineage)
        if visible is None or lineage is None:
            chosen = self.mechanical.rank(index, query, self.candidates)
            recent, used = index.recent_order, index.hit_order
        else:
            chosen = self.mechanical.rank_visible(index, query, self.candidates, lineage)
            recent = [i for i in index.recent_order if index.entries[i].id in visible]
            used = [i for i in index.hit_order if index.entries[i].id in visible]
        chosen += recent[: self.extra_recent] + used[: self.extra_hit]
        positions = list(dict.fromkeys(chosen))  # BM25 order first, no repeats
        logger.debug(
            "hybrid retrieval: %d of %d memories go to the model", len(positions), index.size
        )
        candidates = [index.entries[i] for i in positions]
        return self.llm_retriever.select(query, candidates, limit, lineage)
