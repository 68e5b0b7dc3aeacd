"""Erasing inside the memory backends: one memory's rows (with what other items' histories say
of it) or every row of a user, and the free space the backend keeps deleted text in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.erasure.files import VECTOR_SIDECAR, erase_yaml_copies
from memory.retrieval.vector_store import vector_owners
from memory.store.core_context import GOAL_PREFIX
from memory.store.erasure_report import ErasureReport
from memory.store.manager import BaseMemoryManager
from memory.store.sqlite_file import remove_database, scrub
from memory.text.needles import Needles

_SQLITE_USER_TABLES = (
    "memory_items", "memory_history", "memory_turns", "memory_meta", "memory_core_context",
    "memory_vectors",
)  # fmt: skip


def purge_items(manager: BaseMemoryManager, needles: Needles, report: ErasureReport) -> None:
    """Remove the erased items with their history, and redact the entries other items keep of
    them (a merge keeps the absorbed item's history): one transaction."""
    redacted = 0
    with manager.transaction() as tx:
        for memory_id, item in manager.all_items().items():
            if memory_id in needles.ids:
                tx.remove(memory_id)
                continue
            history, changed = needles.redact(item.history)
            if changed:
                current = tx.get(memory_id)
                assert current is not None
                current.history = history
                tx.put(memory_id, current)
                redacted += 1
    manager._document_cache = None  # keyed on a revision; never serve a read from before
    report.count(f"{manager.backend} store: memories", len(needles.ids))
    report.count(f"{manager.backend} store: other memories' history redacted", redacted)
    for memory_id, item in manager.list_items().items():
        if any(needles.in_text(text) for text in (item.description, item.theme)):
            report.notes.append(
                f"memory {memory_id} still says it in its own words ({item.description[:60]!r})"
                "; erase it too if it should go"
            )


def redact_core_context(
    manager: BaseMemoryManager, needles: Needles, report: ErasureReport
) -> None:
    """Take the erased texts out of the core context block (`human` lists the user's facts;
    a goal may quote a message): the rest of each part stays as it was."""

    def changes(current: Mapping[str, str]) -> dict[str, str]:
        parts = {
            k: v
            for k, v in current.items()
            if k in ("persona", "human") or k.startswith(GOAL_PREFIX)
        }
        return {k: needles.without(v) for k, v in parts.items() if needles.without(v) != v}

    before = manager.read_document().core_context
    after = manager._update_core_context(changes)
    report.count(
        "core context: parts rewritten",
        sum(after.get(k) != v for k, v in before.items() if k != "updated_at"),
    )


def scrub_backend(manager: BaseMemoryManager, report: ErasureReport) -> None:
    """Leave nothing of the deleted rows in the backend's free space, where it has one we reach."""
    from memory.store.backends.sqlite_db import SqliteMemoryManager

    if isinstance(manager, SqliteMemoryManager):
        if not scrub(manager._conn()):
            report.notes.append(
                f"{manager.path}-wal is held by a reader: emptied at its next checkpoint"
            )
        report.file(manager.path, "vacuumed")


def erase_everything(manager: BaseMemoryManager, report: ErasureReport) -> None:
    """Every row and file of the user in the backend, nobody else's."""
    from memory.store.backends.langgraph_store import StoreMemoryManager
    from memory.store.backends.sqlite_db import SqliteMemoryManager
    from memory.store.backends.yaml_files import YamlMemoryManager

    report.count(f"{manager.backend} store: memories", len(manager.all_items()))
    if isinstance(manager, YamlMemoryManager):
        with manager._write_lock():
            if manager.path.exists():
                manager.path.unlink()
                report.file(manager.path, "removed")
            manager._cache = manager._parsed = None
        erase_yaml_copies(manager.directory, manager.user_id, None, report)
        sidecar = manager.directory / VECTOR_SIDECAR.format(stem=manager.stem)
        for removed in remove_database(sidecar):
            report.file(removed, "removed")
        manager._lock_path.unlink(missing_ok=True)
    elif isinstance(manager, SqliteMemoryManager):
        with manager._write_lock():
            conn = manager._conn()
            present = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
            for table in _SQLITE_USER_TABLES:
                if table in present:
                    owners = vector_owners(manager.user_id) if table == "memory_vectors" else ()
                    for owner in owners or (manager.user_id,):
                        conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (owner,))
        scrub_backend(manager, report)
    elif isinstance(manager, StoreMemoryManager):
        report.count("store: keys", _erase_namespaces(manager))
    else:  # a backend this module does not know: its own save of an empty document
        from memory.store.document import MemoryDocument

        with manager._write_lock():
            manager._save_all(MemoryDocument())
    manager._document_cache = None


def _erase_namespaces(manager: Any) -> int:
    """Delete every key under the user's namespaces of every kind this code writes (items,
    revision and core context, applied turns, the change feed, repaired originals, vectors,
    self-check probes)
    through the store's own search and delete: no other namespace is touched, and a store that
    cannot list namespaces (the server's, through the SDK) works the same."""
    from langgraph.store.base import PutOp

    from memory.retrieval.vector_store import VECTORS_NAMESPACE
    from memory.store.backends.langgraph_store import (
        BACKUP_NAMESPACE,
        ITEMS_NAMESPACE,
        META_NAMESPACE,
        TURNS_NAMESPACE,
        namespace_label,
    )
    from memory.store.backends.store_changes import CHANGES_NAMESPACE

    store, label, page = manager.store, namespace_label(manager.user_id), 1000
    kinds = [
        (k, label)
        for k in (
            ITEMS_NAMESPACE, META_NAMESPACE, TURNS_NAMESPACE, BACKUP_NAMESPACE, CHANGES_NAMESPACE
        )
    ]  # fmt: skip
    kinds += [(VECTORS_NAMESPACE, owner) for owner in vector_owners(label)]
    erased = 0
    with manager._write_lock():
        for kind, owner in kinds:
            found: list[tuple[tuple[str, ...], str]] = []
            read = 0
            while True:  # deleting while paging would skip keys: read the whole namespace first
                hits = store.search((kind, owner), limit=page, offset=read)
                found += [
                    (tuple(h.namespace), h.key)
                    for h in hits
                    if tuple(h.namespace)[:2] == (kind, owner)
                ]
                read += len(hits)
                if len(hits) < page:
                    break
            for start in range(0, len(found), page):
                store.batch([PutOp(ns, key, None) for ns, key in found[start : start + page]])
            erased += len(found)
    return erased
