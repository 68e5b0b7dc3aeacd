"""Gulfstream memory: items, managers (YAML, SQLite, LangGraph store), retrieval and writing.

Storage, BM25 retrieval, snapshots and the write journal work without LangChain; the LLM
retriever, the memory agent and the store backend import it (or LangGraph) when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.branch import Lineage, Provenance, filter_ranked, overfetch_k, visible_ids
from memory.document import ApplyResult, Change, MemoryDocument
from memory.errors import (
    CopyOnWriteRefused,
    CorruptStoreError,
    MemoryNotFound,
    StaleWrite,
    WritesDisabled,
)
from memory.factory import open_memory_manager
from memory.item import MemoryItem
from memory.lazy import lazy_exports
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager, validate_user_id
from memory.registry import MemoryRegistry, open_memory
from memory.repair import SelfCheckReport
from memory.retrieval import MechanicalRetriever, RetrievalMode
from memory.turn import Turn

if TYPE_CHECKING:
    from memory.retrieval import HybridRetriever, LLMRetriever
    from memory.sqlite_manager import SqliteMemoryManager
    from memory.store_manager import StoreMemoryManager
    from memory.writer import MemoryConsumer
    from memory.yaml_manager import YamlMemoryManager

_LAZY = {
    "YamlMemoryManager": "memory.yaml_manager",
    "SqliteMemoryManager": "memory.sqlite_manager",
    "StoreMemoryManager": "memory.store_manager",
    "LLMRetriever": "memory.retrieval.llm",
    "HybridRetriever": "memory.retrieval.hybrid",
    "MemoryConsumer": "memory.writer.consumer",
}
__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "ApplyResult",
    "BaseMemoryManager",
    "Change",
    "CopyOnWriteRefused",
    "CorruptStoreError",
    "HybridRetriever",
    "LLMRetriever",
    "Lineage",
    "LongTermMemory",
    "MechanicalRetriever",
    "MemoryConsumer",
    "MemoryDocument",
    "MemoryItem",
    "MemoryNotFound",
    "MemoryRegistry",
    "Provenance",
    "RetrievalMode",
    "SelfCheckReport",
    "SqliteMemoryManager",
    "StaleWrite",
    "StoreMemoryManager",
    "Turn",
    "WritesDisabled",
    "YamlMemoryManager",
    "filter_ranked",
    "open_memory",
    "open_memory_manager",
    "overfetch_k",
    "validate_user_id",
    "visible_ids",
]
