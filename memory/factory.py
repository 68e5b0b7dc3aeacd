"""open_memory_manager: one manager for one user from a short spec such as `yaml:data/memory`."""

from __future__ import annotations

import logging
import os
from typing import Any

from memory.manager import BaseMemoryManager

logger = logging.getLogger(__name__)

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


_opened: dict[tuple[str, str, int], BaseMemoryManager] = {}


def get_memory_manager(spec: str, user_id: str, store: Any | None = None) -> BaseMemoryManager:
    """The process-wide manager for (spec, user, store), self-checked the first time it is opened.

    A FAIL report stops writes for that user (reads go on); the report is logged either way.
    """
    key = (spec, user_id, id(store))
    manager = _opened.get(key)
    if manager is None:
        manager = open_memory_manager(spec, user_id, store)
        report = manager.self_check()
        log = logger.error if report.status == "FAIL" else logger.info
        log(
            "memory self_check for user %r (%s): %s, %d items, issues=%s, repaired=%s",
            user_id,
            manager.backend,
            report.status,
            report.item_count,
            report.issues,
            report.repaired,
        )
        manager.last_report = report
        if report.status != "FAIL":
            _attach_snapshots(manager)
        _opened[key] = manager
    return manager


def snapshot_delay_seconds() -> float | None:
    """GULFSTREAM_SNAPSHOT_SECONDS: quiet seconds before a snapshot (default 5; 'off' disables)."""
    from memory.snapshot import DEFAULT_DELAY_SECONDS

    raw = os.environ.get("GULFSTREAM_SNAPSHOT_SECONDS", "").strip().lower()
    if not raw:
        return DEFAULT_DELAY_SECONDS
    if raw in {"off", "none", "no", "false"}:
        return None
    try:
        delay = float(raw)
    except ValueError as exc:
        raise ValueError(
            f"GULFSTREAM_SNAPSHOT_SECONDS must be a number of seconds or 'off', not {raw!r}"
        ) from exc
    if delay < 0:
        raise ValueError("GULFSTREAM_SNAPSHOT_SECONDS must not be negative")
    return delay


def _attach_snapshots(manager: BaseMemoryManager) -> None:
    """Restore an empty store from its snapshot, then keep the snapshot current after writes.

    Only backends with a folder (YAML, SQLite) have a default snapshot location.
    """
    from memory.snapshot import SnapshotScheduler, default_snapshot_path, restore_if_empty

    path = default_snapshot_path(manager)
    if path is None:
        return
    try:
        if restore_if_empty(manager, path):
            logger.warning(
                "memory of user %r was empty; restored %d items from the snapshot %s",
                manager.user_id,
                len(manager.all_items()),
                path,
            )
    except Exception:  # a bad snapshot must not stop the app; the store is left as it was
        logger.exception("could not restore the memory snapshot %s", path)
    delay = snapshot_delay_seconds()
    if delay is not None:
        scheduler = SnapshotScheduler(manager, path, delay)
        manager.add_change_listener(scheduler.changed)
        manager.snapshot_scheduler = scheduler
