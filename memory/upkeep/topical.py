"""LongTermMemory's topics door (`memory.topics`): a mixin, deleted with the feature."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from memory.retrieval import Retrievers
    from memory.topics import Topic, TopicTable
    from memory.topics.refresh import TopicMemory
    from memory.topics.routing import TopicRouting
    from memory.topics.summaries import SummaryStore
    from memory.upkeep.upkept import UpkeptMemory

logger = logging.getLogger(__name__)


class Topical:
    """Who and what the memories are about, and a summary of each; `memory.topics` is
    imported on first use, not with the door."""

    retrievers: Retrievers
    data_dir: Path
    _open_lock: threading.Lock
    _summaries: SummaryStore | None = None

    @property
    def topic_table(self) -> TopicTable:
        """Who and what the memories are about, rebuilt as the store changes."""
        return cast("TopicRouting", self.retrievers.routing).table

    @property
    def topic_summaries(self) -> SummaryStore:
        """The stored topic summaries, in `data_dir` or the state database (opened on first
        use)."""
        with self._open_lock:
            if self._summaries is None:
                from memory.store.state_db import SUMMARIES_FILE
                from memory.topics.summaries import SCHEMA, SummaryStore

                memory = cast("UpkeptMemory", self)
                self._summaries = SummaryStore(memory.state_database(SUMMARIES_FILE, SCHEMA))
            return self._summaries

    def topics(self) -> list[Topic]:
        """The topics of the live memories (people, places, organisations, dates, subjects),
        hottest first."""
        return self.topic_table.topics()

    def get_topic_summary(self, name: str) -> str | None:
        """A short summary of the topic `name` names (alias, display name or key, either
        language); None when no topic does."""
        from memory.topics import topic_summary

        return topic_summary(cast("TopicMemory", self), name)

    def refresh_topic_summaries(self, llm: Any | None = None) -> int:
        """Summarise the topics that changed (with `llm`, or offline); returns how many were
        written. The consolidation pass calls it at its end."""
        from memory.topics import refresh_topic_summaries

        return refresh_topic_summaries(cast("TopicMemory", self), llm)


def refresh_after_pass(memory: UpkeptMemory, llm: Any | None) -> int:
    """Summaries of the topics whose memories the pass (or the writer since) changed; a failure
    is logged and leaves the old summaries, never the pass undone."""
    try:
        return memory.refresh_topic_summaries(llm)
    except Exception:
        logger.exception("memory of %r: topic summaries not refreshed", memory.user_id)
        return 0
