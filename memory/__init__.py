"""Gulfstream memory: items, managers (YAML, SQLite, LangGraph store), retrieval and writing.

The packages, bottom up (docs/ARCHITECTURE.md): text, usage and errors; store (items, the
manager and its backends); retrieval and admission; archive; writer, topics and erasure; upkeep;
the facade, `LongTermMemory`, and the process's registry of open memories; and `integration`,
the LangGraph side an app builds on. Storage, BM25 retrieval, snapshots and the write journal
work without LangChain. This module is the library's public face for its core (docs/API.md);
`memory.integration` is the face for a LangGraph app.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.errors import (
        CorruptStoreError,
        MemoryBusy,
        MemoryNotFound,
        StaleWrite,
        WritesDisabled,
    )
    from memory.long_term import LongTermMemory
    from memory.registry import open_memory
    from memory.store.branch import Lineage
    from memory.store.document import Change, MemoryDocument
    from memory.store.factory import open_memory_manager, register_backend
    from memory.store.item import MemoryItem
    from memory.store.manager import BaseMemoryManager
    from memory.writer.turn import Turn

# Each name is imported on first use, so that `import memory.store.item` loads the item, not the
# whole library (nor LangChain, which the memory agent and the store backend need).
_HOME = {
    **dict.fromkeys(
        ("CorruptStoreError", "MemoryBusy", "MemoryNotFound", "StaleWrite", "WritesDisabled"),
        "memory.errors",
    ),
    "LongTermMemory": "memory.long_term",
    "open_memory": "memory.registry",
    "Lineage": "memory.store.branch",
    **dict.fromkeys(("Change", "MemoryDocument"), "memory.store.document"),
    **dict.fromkeys(("open_memory_manager", "register_backend"), "memory.store.factory"),
    "MemoryItem": "memory.store.item",
    "BaseMemoryManager": "memory.store.manager",
    "Turn": "memory.writer.turn",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'memory' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "BaseMemoryManager",
    "Change",
    "CorruptStoreError",
    "Lineage",
    "LongTermMemory",
    "MemoryBusy",
    "MemoryDocument",
    "MemoryItem",
    "MemoryNotFound",
    "StaleWrite",
    "Turn",
    "WritesDisabled",
    "open_memory",
    "open_memory_manager",
    "register_backend",
]
