"""get_related_memories: one entry point per mode, with retrievers kept per manager."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from memory.branch import Lineage
from memory.manager import BaseMemoryManager
from memory.retrieval.hybrid import HybridRetriever
from memory.retrieval.llm import LLMRetriever, OnFailure
from memory.retrieval.mechanical import MechanicalRetriever
from memory.retrieval.modes import RetrievalMode

logger = logging.getLogger(__name__)

_warned_without_llm = False
# Kept on the manager object itself, so that the BM25 index outlives one call and dies with the
# manager (a module-level cache keyed by manager would keep every manager alive).
_CACHE_ATTRIBUTE = "_retrievers_cache"


@dataclass
class Retrievers:
    """The retrievers of one manager and one model, created on first use and then reused."""

    manager: BaseMemoryManager
    llm: Any | None = None
    language: str = "auto"  # "en", "zh", or "auto": the prompt follows the query's language
    on_failure: OnFailure = "mechanical"
    _mechanical: MechanicalRetriever | None = field(default=None, repr=False)
    _llm: LLMRetriever | None = field(default=None, repr=False)
    _hybrid: HybridRetriever | None = field(default=None, repr=False)

    @property
    def mechanical(self) -> MechanicalRetriever:
        if self._mechanical is None:
            self._mechanical = MechanicalRetriever(self.manager)
        return self._mechanical

    def retrieve(
        self,
        query: str,
        mode: RetrievalMode | str,
        limit: int = 10,
        lineage: Lineage | None = None,
    ) -> list[dict]:
        """Run `mode`; LLM modes without a model run BM25 instead (logged once per process).

        With a `lineage`, only the memories that run may read (see `memory.branch`)."""
        mode = RetrievalMode.parse(mode)
        if mode is not RetrievalMode.MECHANICAL and self.llm is None:
            _warn_without_llm(mode)
            mode = RetrievalMode.MECHANICAL
        if mode is RetrievalMode.MECHANICAL:
            return self.mechanical.retrieve(query, limit, lineage)
        if mode is RetrievalMode.LLM:
            if self._llm is None:
                self._llm = LLMRetriever(
                    self.manager,
                    self.llm,
                    fallback=self.mechanical,
                    language=self.language,
                    on_failure=self.on_failure,
                )
            return self._llm.retrieve(query, limit, lineage)
        if self._hybrid is None:
            self._hybrid = HybridRetriever(
                self.manager,
                self.llm,
                mechanical=self.mechanical,
                language=self.language,
                on_failure=self.on_failure,
            )
        return self._hybrid.retrieve(query, limit, lineage)


def get_related_memories(
    manager: BaseMemoryManager,
    query: str,
    mode: RetrievalMode | str = RetrievalMode.LLM,
    llm: Any | None = None,
    limit: int = 10,
    lineage: Lineage | None = None,
) -> list[dict]:
    """Memories related to `query` as `{id, description, theme}`, best first, by `mode`."""
    retrievers = shared_retrievers(manager, llm)
    return retrievers.retrieve(query, mode, limit, lineage)


def shared_retrievers(manager: BaseMemoryManager, llm: Any | None = None) -> Retrievers:
    """The retrievers cached on `manager` for this model (the BM25 index is kept across models)."""
    retrievers: Retrievers | None = vars(manager).get(_CACHE_ATTRIBUTE)
    if retrievers is None or retrievers.llm is not llm:
        previous = retrievers.mechanical if retrievers else None
        retrievers = Retrievers(manager, llm, _mechanical=previous)
        setattr(manager, _CACHE_ATTRIBUTE, retrievers)
    return retrievers


def _warn_without_llm(mode: RetrievalMode) -> None:
    global _warned_without_llm
    if not _warned_without_llm:
        _warned_without_llm = True
        logger.warning(
            "retrieval mode %r needs a chat model and none is configured; "
            "using BM25 (mechanical) retrieval",
            mode.value,
        )
