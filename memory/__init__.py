"""Gulfstream memory: items, managers (YAML, SQLite, LangGraph store), retrieval and writing."""

from memory.errors import CorruptStoreError, MemoryNotFound, WritesDisabled
from memory.factory import open_memory_manager
from memory.item import MemoryItem
from memory.manager import ApplyResult, BaseMemoryManager, Change, MemoryDocument, validate_user_id
from memory.repair import SelfCheckReport

__all__ = [
    "ApplyResult",
    "BaseMemoryManager",
    "Change",
    "CorruptStoreError",
    "MemoryDocument",
    "MemoryItem",
    "MemoryNotFound",
    "SelfCheckReport",
    "WritesDisabled",
    "open_memory_manager",
    "validate_user_id",
]
