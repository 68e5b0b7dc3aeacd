"""UpkeptMemory: what upkeep (consolidation passes, topic summaries, recall upkeep) reads of one
user's memory; `LongTermMemory` is one, and upkeep never imports it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memory.retrieval import Retrievers
    from memory.retrieval.ranking import Ranking
    from memory.store.manager import BaseMemoryManager
    from memory.store.state_db import StateDatabase
    from memory.topics.user_topics import UserTopics  # feature: topics
    from memory.writer.trace import WriteTrace


class UpkeptMemory(Protocol):
    """The store and its records, the retrievers and the ranking of one user's memory (and the
    topics' refresh, which a consolidation pass ends with)."""

    manager: BaseMemoryManager
    retrievers: Retrievers
    data_dir: Path
    state_dsn: str | None
    ranking_type: type[Ranking]

    @property
    def user_id(self) -> str: ...
    @property
    def trace(self) -> WriteTrace: ...
    def state_database(self, file: str, schema: str, synchronous: str = "") -> StateDatabase: ...

    topics: UserTopics  # feature: topics
