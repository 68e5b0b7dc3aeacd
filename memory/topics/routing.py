"""Retrieval by topic: a `topic` filter, and broad questions that name a topic ("how is Tom")."""

from __future__ import annotations

from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.bm25_index import IndexedMemory
from memory.retrieval.query import read_query
from memory.store.branch import Lineage, filter_ranked
from memory.store.manager import BaseMemoryManager
from memory.topics.table import TopicTable


class TopicRouting:
    """The topics part of `Retrievers`: the manager's topic table (made on first use, kept
    current), the `topic` filter, and broad questions answered by the topic they name."""

    def __init__(self, manager: BaseMemoryManager, mechanical: MechanicalRetriever) -> None:
        self.manager = manager
        self.mechanical = mechanical
        self._table: TopicTable | None = None

    @property
    def table(self) -> TopicTable:
        if self._table is None:
            # A memory's hotness with its recall signals, the same as ranking's.
            self._table = TopicTable(
                self.manager, lambda i, item: self.mechanical.hotness.of(i, item)
            )
        return self._table

    def within_topic(
        self, query: str, topic: str, limit: int, lineage: Lineage | None
    ) -> list[dict[str, str]]:
        return within_topic(self.mechanical, self.table, query, topic, limit, lineage)

    def named_topic_answer(
        self, query: str, limit: int, lineage: Lineage | None
    ) -> list[dict[str, str]] | None:
        return named_topic_answer(self.mechanical, self.table, query, limit, lineage)


def within_topic(
    mechanical: MechanicalRetriever,
    table: TopicTable,
    query: str,
    topic: str,
    limit: int = 10,
    lineage: Lineage | None = None,
) -> list[dict[str, str]]:
    """Memories of the topic `topic` names (a key, an alias in either language, a display name),
    best first; `[]` when no topic has that name.

    A broad query (or one that only names the topic again) gets the topic's members hottest and
    most recent first; any other is ranked by BM25 (fused with the semantic channel when it is
    on) and only the topic's members are kept, in rank order."""
    if limit <= 0 or not isinstance(query, str):
        return []
    found = table.topic(topic)
    if found is None:
        return []
    index = mechanical.index()
    members = set(found.members)
    visible = mechanical.visible(lineage) if lineage is not None else None
    if not query.strip() or read_query(query).broad or table.topic_of_query(query) == found.key:
        ranked = list(found.members)
    else:
        positions = mechanical.rank(index, query, index.size, broad=False)
        ranked = [index.entries[i].id for i in positions if index.entries[i].id in members]
    kept = filter_ranked(ranked, visible, limit) if visible is not None else ranked[:limit]
    return [_result(mechanical, index_id) for index_id in kept]


def named_topic_answer(
    mechanical: MechanicalRetriever,
    table: TopicTable,
    query: str,
    limit: int = 10,
    lineage: Lineage | None = None,
) -> list[dict[str, str]] | None:
    """For a broad question about one topic ("what's new with my sister", "我妈最近怎么样"), the
    topic's members, hottest and most recent first; None for any other query (the usual
    ranking answers it)."""
    if not isinstance(query, str) or not query.strip() or limit <= 0:
        return None
    key = table.topic_of_query(query)
    if key is None:
        return None
    return within_topic(mechanical, table, "", key, limit, lineage)


def _result(mechanical: MechanicalRetriever, memory_id: str) -> dict[str, str]:
    index = mechanical.index()
    position = index.positions.get(memory_id)
    if position is not None:
        return index.entries[position].as_result()
    item = mechanical.manager.get(memory_id)  # the index is older than the table: read it
    return IndexedMemory.of(memory_id, item).as_result()
