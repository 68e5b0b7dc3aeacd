"""UserTopics: one user's topics, the part of `LongTermMemory` the topics feature adds."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from memory.store.manager import BaseMemoryManager
from memory.store.state_db import StateDatabase
from memory.topics.refresh import refresh_topic_summaries, topic_summary
from memory.topics.routing import TopicRouting
from memory.topics.summaries import SummaryStore
from memory.topics.table import Topic, TopicTable

logger = logging.getLogger(__name__)


class UserTopics:
    """Who and what one user's memories are about (`table`, kept current as the store changes,
    the one retrieval routes by) and a stored summary of each (`summaries`, in the database
    `open_summaries` opens on first use: a file in `data_dir`, or the deployment's PostgreSQL)."""

    def __init__(
        self,
        manager: BaseMemoryManager,
        routing: TopicRouting,
        open_summaries: Callable[[], StateDatabase],
    ) -> None:
        self.manager = manager
        self.routing = routing
        self._open_summaries = open_summaries
        self._summaries: SummaryStore | None = None
        self._lock = threading.Lock()

    @property
    def user_id(self) -> str:
        return self.manager.user_id

    @property
    def table(self) -> TopicTable:
        return self.routing.table

    @property
    def summaries(self) -> SummaryStore:
        with self._lock:
            if self._summaries is None:
                self._summaries = SummaryStore(self._open_summaries())
            return self._summaries

    def all(self) -> list[Topic]:
        """The topics of the live memories (people, places, organisations, dates, subjects),
        hottest first."""
        return self.table.topics()

    def summary(self, name: str) -> str | None:
        """A short summary of the topic `name` names (alias, display name or key, either
        language); None when no topic does."""
        return topic_summary(self, name)

    def refresh(self, llm: Any | None = None) -> int:
        """Summarise the topics that changed (with `llm`, or offline); returns how many were
        written. A consolidation pass calls it at its end (`refresh_after_pass`)."""
        return refresh_topic_summaries(self, llm)

    def refresh_after_pass(self, llm: Any | None) -> int:
        """`refresh`, for the end of a consolidation pass: a failure is logged and leaves the old
        summaries, never the pass undone."""
        try:
            return self.refresh(llm)
        except Exception:
            logger.exception("memory of %r: topic summaries not refreshed", self.user_id)
            return 0
