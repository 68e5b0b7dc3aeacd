"""Memories said on a given day of 2024 (an imported history: long before today), and what a
question finds among them in a real SQLite store."""

from __future__ import annotations

from pathlib import Path

from memory import LongTermMemory
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager


def said(text: str, day: str) -> MemoryItem:
    """A memory first said on `day` ("MM-DD") of 2024 at noon UTC (the same local day anywhere),
    in a conversation of that day."""
    return said_at(text, f"2024-{day}T12:00:00+00:00", thread=day)


def said_at(text: str, when: str, thread: str) -> MemoryItem:
    """A memory first said at `when` (ISO 8601 with its offset) in conversation `thread`."""
    item = MemoryItem.create(text, "conversation", "test", origin={"thread_id": thread})
    item.latest_update_time = when
    item.history[-1]["time"] = when
    return item


def stored(folder: Path, items: dict[str, MemoryItem], user: str = "alice") -> BaseMemoryManager:
    """A real SQLite store in `folder` holding `items` (id → memory) for `user`."""
    manager = open_memory_manager(f"sqlite:{folder / 'memory.db'}", user)
    write_items(manager, items)
    return manager


def found(tmp_path: Path, items: dict[str, MemoryItem], question: str, limit: int = 5) -> list[str]:
    """The ids `question` finds among `items` with the default retrieval (the offline model's
    vectors made first), best first."""
    memory = LongTermMemory(stored(tmp_path, items))
    assert memory.retrievers.catch_up(max_missing=len(items), timeout=300)
    return [m["id"] for m in memory.get_related_memory_from(question, "mechanical", limit)]
