"""The editor's grouping by topic (`memory.topics`): each card under its main topic."""

from __future__ import annotations

from collections.abc import Callable

from memory import LongTermMemory, MemoryItem


def by_topic(memory: LongTermMemory) -> Callable[[str, MemoryItem], tuple[str, str, str]]:
    """A card's section: its main topic (see TopicTable.main_topic), else its theme."""
    table = memory.topics.table

    def section(memory_id: str, item: MemoryItem) -> tuple[str, str, str]:
        main = table.main_topic(memory_id)
        if main is not None:
            return main.key, main.name, main.name_zh
        return item.theme, item.theme, item.theme

    return section
