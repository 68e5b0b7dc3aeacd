"""open_memory_manager: one manager for one user from a short spec such as `yaml:data/memory`."""

from __future__ import annotations

from typing import Any

from memory.manager import BaseMemoryManager

DEFAULT_SPEC = "yaml:data/memory"
SPEC_HELP = (
    "use 'yaml:<directory>', 'sqlite:<file.db>', 'store' (the LangGraph server's store, passed "
    "in), 'postgres:<connection string>', or 'store:memory' (an in-process store that forgets "
    "everything at exit: tests only)"
)
STORE_NEEDS_SERVER = (
    "the store backend needs the LangGraph server's store; for local use choose "
    "sqlite:<file.db> or yaml:<directory> (or 'store:memory' for a throwaway in-process store)"
)


def open_memory_manager(spec: str, user_id: str, store: Any | None = None) -> BaseMemoryManager:
    """Open the manager named by `spec` for `user_id`; a bad spec raises ValueError."""
    kind, _, target = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "yaml":
        from memory.yaml_manager import YamlMemoryManager

        return YamlMemoryManager(target or "data/memory", user_id)
    if kind == "sqlite":
        from memory.sqlite_manager import SqliteMemoryManager

        return SqliteMemoryManager(target or "data/memory.db", user_id)
    if kind == "store":
        from memory.store_manager import StoreMemoryManager

        if target.strip().lower() == "memory":
            # Explicitly non-persistent: every process (and every call) starts empty.
            from langgraph.store.memory import InMemoryStore

            return StoreMemoryManager(store if store is not None else InMemoryStore(), user_id)
        if target.strip():
            raise ValueError(f"unknown memory backend {spec!r}: {SPEC_HELP}")
        if store is None:
            # Silently using an in-process store would forget every memory at exit while the
            # write journal marks the turns done.
            raise ValueError(STORE_NEEDS_SERVER)
        return StoreMemoryManager(store, user_id)
    if kind == "postgres":
        from memory.store_manager import StoreMemoryManager, open_postgres_store

        if not target:
            raise ValueError(f"memory backend {spec!r} needs a connection string: {SPEC_HELP}")
        return StoreMemoryManager(open_postgres_store(target), user_id)
    raise ValueError(f"unknown memory backend {spec!r}: {SPEC_HELP}")
