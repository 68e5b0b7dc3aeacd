"""Gulfstream memory: items, managers (YAML, SQLite, LangGraph store), retrieval and writing.

The packages, bottom up (docs/ARCHITECTURE.md): text, usage and errors; store (items, the
manager and its backends); retrieval and admission; archive; writer, topics and erasure; upkeep;
then the facade, `LongTermMemory`, and the process's registry of open memories. Storage, BM25
retrieval, snapshots and the write journal work without LangChain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.lazy import keep_moved_modules, lazy_exports
from memory.moved import MOVED_MODULES

if TYPE_CHECKING:
    from memory.errors import (
        CopyOnWriteRefused,
        CorruptStoreError,
        MemoryNotFound,
        StaleWrite,
        WritesDisabled,
    )
    from memory.long_term import LongTermMemory
    from memory.registry import MemoryRegistry, open_memory
    from memory.retrieval import HybridRetriever, LLMRetriever, MechanicalRetriever, RetrievalMode
    from memory.store.backends.langgraph_store import StoreMemoryManager
    from memory.store.backends.sqlite_db import SqliteMemoryManager
    from memory.store.backends.yaml_files import YamlMemoryManager
    from memory.store.branch import Lineage, Provenance, filter_ranked, overfetch_k, visible_ids
    from memory.store.document import ApplyResult, Change, MemoryDocument
    from memory.store.factory import open_memory_manager
    from memory.store.item import MemoryItem
    from memory.store.manager import BaseMemoryManager, validate_user_id
    from memory.store.repair import SelfCheckReport
    from memory.writer import MemoryConsumer
    from memory.writer.turn import Turn

# Every name is imported on first use: `import memory.store.item` loads the item, not the whole
# library (nor LangChain, which the LLM retriever, the memory agent and the store backend need).
_LAZY = {
    **dict.fromkeys(
        (
            "CopyOnWriteRefused",
            "CorruptStoreError",
            "MemoryNotFound",
            "StaleWrite",
            "WritesDisabled",
        ),
        "memory.errors",
    ),
    "LongTermMemory": "memory.long_term",
    "MemoryRegistry": "memory.registry",
    "open_memory": "memory.registry",
    "MechanicalRetriever": "memory.retrieval",
    "RetrievalMode": "memory.retrieval",
    "LLMRetriever": "memory.retrieval.llm",
    "HybridRetriever": "memory.retrieval.hybrid",
    "YamlMemoryManager": "memory.store.backends.yaml_files",
    "SqliteMemoryManager": "memory.store.backends.sqlite_db",
    "StoreMemoryManager": "memory.store.backends.langgraph_store",
    **dict.fromkeys(
        ("Lineage", "Provenance", "filter_ranked", "overfetch_k", "visible_ids"),
        "memory.store.branch",
    ),
    **dict.fromkeys(("ApplyResult", "Change", "MemoryDocument"), "memory.store.document"),
    "open_memory_manager": "memory.store.factory",
    "MemoryItem": "memory.store.item",
    "BaseMemoryManager": "memory.store.manager",
    "validate_user_id": "memory.store.manager",
    "SelfCheckReport": "memory.store.repair",
    "MemoryConsumer": "memory.writer.consumer",
    "Turn": "memory.writer.turn",
}
__getattr__ = lazy_exports(__name__, _LAZY)
keep_moved_modules(MOVED_MODULES)  # the paths of 0.1 (memory.yaml_manager, …), for one release


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
