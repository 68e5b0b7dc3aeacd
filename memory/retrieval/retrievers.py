"""Retrievers: the BM25 retriever of one manager, and the LLM modes built on it when asked for."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any, Protocol

from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.modes import OnFailure, RetrievalMode
from memory.store.branch import Lineage
from memory.store.manager import BaseMemoryManager

if TYPE_CHECKING:
    from memory.prompts.writer import Sections
    from memory.retrieval.fusion import RecallChannel
    from memory.retrieval.hybrid import HybridRetriever
    from memory.retrieval.llm import LLMRetriever
    from memory.retrieval.ranking import Ranking
    from memory.retrieval.semantic import ChannelStatus

logger = logging.getLogger(__name__)

_warned_without_llm = False


class TopicRouter(Protocol):
    """Retrieval by topic (`memory.topics.routing.TopicRouting` is the one): the `topic` filter,
    and the answer to a broad question that names a topic (None: it names none)."""

    def within_topic(
        self, query: str, topic: str, limit: int, lineage: Lineage | None
    ) -> list[dict[str, str]]: ...

    def named_topic_answer(
        self, query: str, limit: int, lineage: Lineage | None
    ) -> list[dict[str, str]] | None: ...


class WithoutTopics:
    """What retrieval does without topics (the feature off, or deleted): no topic has a name."""

    def within_topic(
        self, query: str, topic: str, limit: int, lineage: Lineage | None
    ) -> list[dict[str, str]]:
        return []

    def named_topic_answer(
        self, query: str, limit: int, lineage: Lineage | None
    ) -> list[dict[str, str]] | None:
        return None


class Retrievers:
    """One manager's retrievers. The BM25 index lives in `mechanical` and is shared by every
    mode; the LLM retrievers (which need langchain-core) are built on first use, per model.
    With `embeddings` (see `memory.retrieval.embedder.resolve_embeddings`), the `semantic`
    channel is fused into BM25's ranking for every mode, search included. `min_score` drops
    ranked matches below that fraction of the best one; `hotness` orders ties and broad
    questions (see `MechanicalRetriever`). `routing` answers questions that name a topic
    (`LongTermMemory` plugs the topics feature in); `topic_routing` False: a question naming a
    person or place is ranked like any other."""

    def __init__(
        self,
        manager: BaseMemoryManager,
        llm: Any | None = None,
        *,
        language: str = "auto",
        on_failure: OnFailure = "mechanical",
        embeddings: Any = None,
        min_score: float = 0.0,
        hotness: Ranking | None = None,
    ) -> None:
        self.manager = manager
        self.llm = llm
        self.language = language  # "en", "zh", or "auto": the prompt follows the query
        self.on_failure: OnFailure = on_failure
        self.mechanical = MechanicalRetriever(manager, hotness=hotness, min_score=min_score)
        self.semantic: RecallChannel | None = None
        if embeddings is not None:
            from memory.retrieval.fusion import FusedRanking

            self.semantic = _channel_for(manager, embeddings)
            self.mechanical.fused = FusedRanking(self.semantic)
        self._llm_modes: dict[tuple[RetrievalMode, int], LLMRetriever | HybridRetriever] = {}
        # The memory sections the LLM modes' examples name (the app's); None: the examples' own.
        self.sections: Sections | None = None
        self.routing: TopicRouter = WithoutTopics()
        self.topic_routing = True

    def recall_status(self) -> ChannelStatus | None:
        """How far the semantic channel's vectors are (None without one, or when the store
        keeps them): memories without a vector yet are found by BM25 alone."""
        if self.semantic is None:
            return None
        self.semantic.catch_up(self.mechanical.index(), 0, timeout=0)  # in step, never waiting
        return self.semantic.status()

    def catch_up(self, max_missing: int | None = None, timeout: float | None = None) -> bool:
        """After a bulk load (import, restore): make the missing vectors before returning when
        at most `max_missing` are missing (default `semantic.EMBED_BEFORE_RETURN`), else leave
        them to the background. True when every live memory has its vector."""
        if self.semantic is None:
            return True
        from memory.retrieval.semantic import EMBED_BEFORE_RETURN

        limit = EMBED_BEFORE_RETURN if max_missing is None else max_missing
        return self.semantic.catch_up(self.mechanical.index(), limit, timeout)

    def search(self, query: str, limit: int = 50) -> list[str]:
        """Ids for a search box: memories containing `query`, then those BM25 ranks for it;
        only when neither finds anything, the few the semantic channel finds clearly close.
        Never the recent and much-used ones a broad question gets, and nothing by meaning for a
        broad one: a search shows what matches, or nothing."""
        found = self.mechanical.search(query, limit)
        if found or self.semantic is None or not query.strip():
            return found
        from memory.retrieval.query import read_query
        from memory.retrieval.semantic import SEARCH_MIN_SIMILARITY, SEARCH_RELATED_LIMIT

        index = self.mechanical.index()
        reading = read_query(query, index.theme_keys)
        if reading.broad or reading.theme_key is not None:
            return found  # "everything", "lately": no topic to be close to
        depth = min(limit, SEARCH_RELATED_LIMIT)
        try:
            near = self.semantic.similar(index, query, depth, SEARCH_MIN_SIMILARITY)
        except Exception:  # a failing embedding provider leaves the lexical answer
            logger.exception("semantic search failed; showing lexical matches only")
            return found
        return [index.entries[position].id for position in near]

    def retrieve(
        self,
        query: str,
        mode: RetrievalMode | str,
        limit: int = 10,
        lineage: Lineage | None = None,
        llm: Any | None = None,
        *,
        topic: str | None = None,
    ) -> list[dict[str, str]]:
        """Memories related to `query` by `mode`, best first; LLM modes without a model (`llm`
        here or at construction) run BM25 instead, logged once per process. With a `lineage`,
        only what that run may read (see `memory.store.branch`). With a `topic`, only that topic's
        members, ranked by BM25 whatever the mode (`[]` for an unknown topic); a broad question
        naming a topic gets its members in BM25 mode (see `memory.topics.routing`)."""
        mode = RetrievalMode.parse(mode)
        if topic is not None:
            return self.routing.within_topic(query, topic, limit, lineage)
        model = llm if llm is not None else self.llm
        if mode is not RetrievalMode.MECHANICAL and model is None:
            _warn_without_llm(mode)
            mode = RetrievalMode.MECHANICAL
        if mode is RetrievalMode.MECHANICAL:
            named = (
                self.routing.named_topic_answer(query, limit, lineage)
                if self.topic_routing
                else None
            )
            if named is not None:
                return named
            return self.mechanical.retrieve(query, limit, lineage)
        return self._llm_mode(mode, model).retrieve(query, limit, lineage)

    def _llm_mode(self, mode: RetrievalMode, llm: Any) -> LLMRetriever | HybridRetriever:
        key = (mode, id(llm))
        retriever = self._llm_modes.get(key)
        if retriever is None or retriever.llm is not llm:
            from memory.retrieval.hybrid import HybridRetriever
            from memory.retrieval.llm import LLMRetriever

            if mode is RetrievalMode.LLM:
                retriever = LLMRetriever(
                    self.manager, llm, fallback=self.mechanical,
                    language=self.language, on_failure=self.on_failure, sections=self.sections,
                )  # fmt: skip
            else:
                retriever = HybridRetriever(
                    self.manager, llm, mechanical=self.mechanical,
                    language=self.language, on_failure=self.on_failure, sections=self.sections,
                )  # fmt: skip
            self._llm_modes = {key: retriever}  # one model at a time: switching replaces it
        return retriever


def _channel_for(manager: BaseMemoryManager, embeddings: Any) -> RecallChannel:
    """A store that embeds what is put in it (an index configured in langgraph.json) keeps the
    vectors itself; every other backend gets vectors kept beside it, made with `embeddings`."""
    from memory.retrieval.semantic import SemanticChannel
    from memory.retrieval.store_index import StoreIndexChannel, store_index_of
    from memory.retrieval.vector_store import vector_store_for

    # Loaded once a store manager exists: a manager of another kind never imports it.
    store_module = sys.modules.get("memory.store.backends.langgraph_store")
    if store_module is not None and isinstance(manager, store_module.StoreMemoryManager):
        config = store_index_of(manager.store)
        if config is not None:
            model = str(config.get("embed", "the store's index"))
            return StoreIndexChannel(manager.store, manager.items_ns, model)
    return SemanticChannel(embeddings, vector_store_for(manager))


def _warn_without_llm(mode: RetrievalMode) -> None:
    global _warned_without_llm
    if not _warned_without_llm:
        _warned_without_llm = True
        logger.warning(
            "retrieval mode %r needs a chat model and none is configured; "
            "using BM25 (mechanical) retrieval",
            mode.value,
        )
