"""Gulfstream memory: items, managers (YAML, SQLite, LangGraph store), retrieval and writing.

Storage, BM25 retrieval, snapshots and the write journal work without LangChain; the LLM
retriever, the memory agent and the store backend import it (or LangGraph) when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.errors import (
    CopyOnWriteRefused,
    CorruptStoreError,
    MemoryNotFound,
    StaleWrite,
    WritesDisabled,
)
from memory.lazy import lazy_exports
from memory.long_term import LongTermMemory
from memory.registry import MemoryRegistry, open_memory
from memory.retrieval import MechanicalRetriever, RetrievalMode
from memory.store.branch import Lineage, Provenance, filter_ranked, overfetch_k, visible_ids
from memory.store.document import ApplyResult, Change, MemoryDocument
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager, validate_user_id
from memory.store.repair import SelfCheckReport
from memory.writer.turn import Turn

if TYPE_CHECKING:
    from memory.retrieval import HybridRetriever, LLMRetriever
    from memory.store.backends.langgraph_store import StoreMemoryManager
    from memory.store.backends.sqlite_db import SqliteMemoryManager
    from memory.store.backends.yaml_files import YamlMemoryManager
    from memory.writer import MemoryConsumer

_LAZY = {
    "YamlMemoryManager": "memory.store.backends.yaml_files",
    "SqliteMemoryManager": "memory.store.backends.sqlite_db",
    "StoreMemoryManager": "memory.store.backends.langgraph_store",
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
