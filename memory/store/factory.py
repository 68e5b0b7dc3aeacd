"""open_memory_manager: one manager for one user from a short spec such as `yaml:data/memory`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.store.manager import BaseMemoryManager, file_stem, validate_user_id

DEFAULT_SPEC = "yaml:data/memory"
BUILT_IN_KINDS = frozenset({"yaml", "sqlite", "store", "postgres"})
SPEC_HELP = (
    "use 'yaml:<directory>', 'sqlite:<file.db>', 'store' (the LangGraph server's store, passed "
    "in), 'postgres:<connection string>', or 'store:memory' (an in-process store that forgets "
    "everything at exit: tests only)"
)
STORE_NEEDS_SERVER = (
    "the store backend needs the LangGraph server's store; for local use choose "
    "sqlite:<file.db> or yaml:<directory> (or 'store:memory' for a throwaway in-process store)"
)


# Backends an app adds (`register_backend`): kind -> opener of (target, user id, store).
OpenManager = Callable[[str, str, Any], BaseMemoryManager]
_registered: dict[str, OpenManager] = {}


def register_backend(kind: str, open_manager: OpenManager) -> None:
    """Let `<kind>:<target>` name a backend of your own: `open_manager(target, user_id, store)`
    returns its manager for one user (a `BaseMemoryManager` subclass). Register it once, when
    the app is imported; the built-in kinds cannot be replaced."""
    kind = kind.strip().lower()
    if kind in BUILT_IN_KINDS or not kind.isidentifier():
        raise ValueError(f"{kind!r} cannot name a new memory backend")
    _registered[kind] = open_manager


def open_memory_manager(
    spec: str, user_id: str, store: Any | None = None, *, lock_database: str | None = None
) -> BaseMemoryManager:
    """Open the manager named by `spec` for `user_id`; a bad spec raises ValueError.

    `lock_database` (a PostgreSQL connection string) is where the `store` backend takes its
    write lock, so that processes sharing the store (replicas of one deployment) never
    interleave a write; `postgres:<dsn>` always locks in its own database."""
    kind, _, target = spec.partition(":")
    kind = kind.strip().lower()
    if kind in _registered:
        return _registered[kind](target, validate_user_id(user_id), store)
    if kind == "yaml":
        from memory.store.backends.yaml_files import YamlMemoryManager

        return YamlMemoryManager(target or "data/memory", user_id)
    if kind == "sqlite":
        from memory.store.backends.sqlite_db import SqliteMemoryManager

        return SqliteMemoryManager(target or "data/memory.db", user_id)
    if kind == "store":
        from memory.store.backends.langgraph_store import StoreMemoryManager

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
        if lock_database:
            from memory.store.postgres import postgres_lock

            return StoreMemoryManager(store, user_id, postgres_lock(lock_database))
        return StoreMemoryManager(store, user_id)
    if kind == "postgres":
        from memory.store.backends.langgraph_store import StoreMemoryManager
        from memory.store.postgres import open_postgres_store, postgres_lock

        if not target:
            raise ValueError(f"memory backend {spec!r} needs a connection string: {SPEC_HELP}")
        return StoreMemoryManager(
            open_postgres_store(target), user_id, postgres_lock(target), writes_in_lock=True
        )
    raise ValueError(f"unknown memory backend {spec!r}: {SPEC_HELP}")


def backend_folder(spec: str) -> Path | None:
    """The folder a file backend keeps its files in (its managers' `data_dir`), computed without
    creating it; None for the stores."""
    kind, _, target = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "yaml":
        return Path(target or "data/memory")
    if kind == "sqlite":
        return Path(target or "data/memory.db").parent
    return None


def has_stored_memory(spec: str, user_id: str, store: Any | None = None) -> bool:
    """Whether backend `spec` holds anything of `user_id` (items, tombstones, a revision, a core
    context, or a snapshot that opening would restore), found without creating any file, lock,
    row or manager: what a read-only caller asks before opening a user that may not exist."""
    stem = file_stem(validate_user_id(user_id))
    if spec.partition(":")[0].strip().lower() in _registered:
        return True  # an app's own backend: only its manager knows; opening it will tell
    folder = backend_folder(spec)
    if folder is not None and (folder / "memory_backup" / f"{stem}.jsonl.gz").exists():
        return True
    kind, _, target = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "yaml":
        return (Path(target or "data/memory") / f"{stem}.yaml").exists()
    if kind == "sqlite":
        return _sqlite_has_user(Path(target or "data/memory.db"), user_id)
    if kind == "store":
        if store is None:
            return False  # `store:memory` without a store: a new, empty in-process store
        return _store_has_user(store, user_id)
    if kind == "postgres":
        from memory.store.postgres import open_postgres_store

        return _store_has_user(open_postgres_store(target), user_id)
    raise ValueError(f"unknown memory backend {spec!r}: {SPEC_HELP}")


def _sqlite_has_user(path: Path, user_id: str) -> bool:
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return True  # unreadable: let the manager open it and report why
    try:
        row = conn.execute(
            "SELECT 1 FROM memory_meta WHERE user_id = ? UNION ALL "
            "SELECT 1 FROM memory_items WHERE user_id = ? LIMIT 1",
            (user_id, user_id),
        ).fetchone()
    except sqlite3.OperationalError as exc:
        return "no such table" not in str(exc)  # a new file has no tables and no users
    except sqlite3.Error:
        return True
    finally:
        conn.close()
    return row is not None


def _store_has_user(store: Any, user_id: str) -> bool:
    # Searches, not gets: a get of a missing key makes the in-memory store (the one
    # `langgraph dev` persists) keep an empty namespace for it.
    from memory.store.backends.langgraph_store import (
        ITEMS_NAMESPACE,
        META_NAMESPACE,
        namespace_label,
    )

    label = namespace_label(user_id)
    return any(store.search((kind, label), limit=1) for kind in (META_NAMESPACE, ITEMS_NAMESPACE))
