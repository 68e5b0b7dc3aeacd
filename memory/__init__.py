"""Gulfstream memory: items, managers (YAML, SQLite, LangGraph store), retrieval and writing."""

from memory.branch import Lineage, Provenance, filter_ranked, overfetch_k, visible_ids
from memory.errors import (
    CopyOnWriteRefused,
    CorruptStoreError,
    MemoryNotFound,
    StaleWrite,
    WritesDisabled,
)
from memory.factory import open_memory_manager
from memory.item import MemoryItem
from memory.manager import ApplyResult, BaseMemoryManager, Change, MemoryDocument, validate_user_id
from memory.repair import SelfCheckReport

__all__ = [
    "ApplyResult",
    "BaseMemoryManager",
    "Change",
    "CopyOnWriteRefused",
    "CorruptStoreError",
    "Lineage",
    "MemoryDocument",
    "MemoryItem",
    "MemoryNotFound",
    "Provenance",
    "SelfCheckReport",
    "StaleWrite",
    "WritesDisabled",
    "filter_ranked",
    "open_memory_manager",
    "overfetch_k",
    "validate_user_id",
    "visible_ids",
]
