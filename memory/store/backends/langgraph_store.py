"""StoreMemoryManager: one user's memories in any LangGraph BaseStore (memory, SQLite, Postgres).

Long because BaseStore has no transaction: the revision, the applied turns and the lock's writes are
kept consistent here.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from memory.store.backends.store_changes import (
    CHANGES_NAMESPACE,
    ChangeFeed,
    revision_counter,
    revision_token,
)
from memory.store.core_context import StoredChanges, merge, read_stored, resolve_changes
from memory.store.document import MemoryDocument, MemoryTransaction
from memory.store.item import MemoryItem, now_iso, time_sort_key
from memory.store.locking import WriteLock, process_lock
from memory.store.manager import BaseMemoryManager
from memory.store.repair import item_from_raw

ITEMS_NAMESPACE = "memories"
META_NAMESPACE = "memories_meta"
TURNS_NAMESPACE = "memories_turns"
BACKUP_NAMESPACE = "memories_backup"
REVISION_KEY = "revision"
CORE_CONTEXT_KEY = "core_context"
PROBE_KEY = "self_check_probe"
PAGE_SIZE = 1000  # store.search returns at most `limit` items: read in pages
WRITE_CHUNK = 2000  # Postgres allows 65535 parameters per statement; a put uses four


def namespace_label(user_id: str) -> str:
    """The user id as a namespace label: stores refuse "." (user ids allow it; never "%")."""
    return user_id.replace(".", "%2E")


def underlying_store(store: Any) -> Any:
    """The store a wrapper delegates to. The LangGraph server hands each thread (event loop) its
    own `BatchedStore` over one shared store (`langgraph_runtime_inmem.store.Store`): a lock
    keyed on the wrapper would let two threads write the same user at once."""
    seen: set[int] = set()
    while id(store) not in seen and getattr(store, "_store", None) is not None:
        seen.add(id(store))
        store = store._store
    return store


class _StoreTransaction(MemoryTransaction):
    """Reads go to the store (or to this transaction's own pending writes); writes are buffered."""

    def __init__(self, manager: StoreMemoryManager) -> None:
        self.manager = manager
        self.pending: dict[str, MemoryItem | None] = {}  # None: remove
        self.turns: list[str] = []

    def get(self, memory_id: str) -> MemoryItem | None:
        if memory_id in self.pending:
            pending = self.pending[memory_id]
            return None if pending is None else MemoryItem(**pending.to_dict())
        return self.manager._get_item(memory_id)

    def put(self, memory_id: str, item: MemoryItem) -> None:
        self.pending[memory_id] = MemoryItem(**item.to_dict())

    def remove(self, memory_id: str) -> None:
        self.pending[memory_id] = None

    def has_turn(self, turn_id: str) -> bool:
        return turn_id in self.turns or self.manager.has_applied(turn_id)

    def record_turn(self, turn_id: str) -> None:
        self.turns.append(turn_id)

    @property
    def dirty(self) -> bool:
        return bool(self.pending or self.turns)


class StoreMemoryManager(BaseMemoryManager):
    """`store`: items in namespace ("memories", user), keyed by memory id, value = the item dict.

    The revision (a counter and a random stamp of the write that set it) lives in ("memories_meta",
    user) and the applied turn ids in ("memories_turns", user). Each write is one `store.batch` of
    puts made under `lock`, read-modify-write included: BaseStore offers no transaction or
    compare-and-set, so every process writing this user must take the same lock. The default
    serialises this process's threads only; processes sharing one PostgreSQL pass a
    `memory.store.locking.PostgresLock` on it. With `writes_in_lock` (the store's tables are in the
    lock's database) the writes go through the lock's own transaction and commit with its release:
    all of a write or none of it, even when the process dies midway.
    """

    backend = "store"

    def __init__(
        self,
        store: BaseStore,
        user_id: str,
        lock: WriteLock | None = None,
        *,
        writes_in_lock: bool = False,
    ) -> None:
        super().__init__(user_id)
        self.store = store
        label = namespace_label(self.user_id)
        self.items_ns = (ITEMS_NAMESPACE, label)
        self.meta_ns = (META_NAMESPACE, label)
        self.turns_ns = (TURNS_NAMESPACE, label)
        self.changes = ChangeFeed(store, (CHANGES_NAMESPACE, label), self.items_ns)
        self._lock = lock if lock is not None else process_lock(underlying_store(store))
        self._lock_name = f"{ITEMS_NAMESPACE}/{label}"
        self._writes_in_lock = writes_in_lock
        self._writer = threading.local()  # the store this thread writes through while locked

    # ── primitives ──────────────────────────────────────────────────────

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with self._lock.hold(self._lock_name, self.user_id) as connection:
            outer = getattr(self._writer, "store", None)
            if outer is None and self._writes_in_lock and connection is not None:
                from langgraph.store.postgres import PostgresStore

                self._writer.store = PostgresStore(connection)
            try:
                yield
            finally:
                self._writer.store = outer

    @property
    def _writes(self) -> BaseStore:
        """Where writes go: the lock's transaction while it is held there, else the store."""
        writer = getattr(self._writer, "store", None)
        return writer if writer is not None else self.store

    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        self._check_writable()
        with self._write_lock():
            transaction = _StoreTransaction(self)
            yield transaction
            if not transaction.dirty:
                return
            ops = [
                PutOp(self.items_ns, i, None if item is None else item.to_dict())
                for i, item in transaction.pending.items()
            ]
            applied = now_iso()
            ops += [
                PutOp(self.turns_ns, t, {"applied_at": applied}, index=False)
                for t in transaction.turns
            ]
            counter, stamp = self._revision() + 1, secrets.token_hex(8)
            ops += self.changes.entry_ops(
                counter, stamp, list(transaction.pending), transaction.turns
            )
            ops.append(self._revision_op(counter, stamp))
            self._writes.batch(ops)  # after the body succeeded: an error above writes nothing
        if transaction.dirty:
            self._notify_changed()

    def _read_core_context(self) -> dict[str, str]:
        stored = self.store.get(self.meta_ns, CORE_CONTEXT_KEY)
        return read_stored(stored.value if stored else None)

    def _update_core_context(self, changes: StoredChanges) -> dict[str, str]:
        with self._write_lock():
            current = self._read_core_context()
            wanted = resolve_changes(current, changes)
            if not wanted:
                return current
            context = merge(current, wanted)
            self._writes.put(self.meta_ns, CORE_CONTEXT_KEY, context, index=False)
        return context

    def _core_context_op(self, context: dict[str, str]) -> PutOp:
        return PutOp(self.meta_ns, CORE_CONTEXT_KEY, dict(context) or None, index=False)

    def _load_all(self) -> MemoryDocument:
        # Revision first: a write landing mid-scan then makes the document newer than its
        # revision, so the read cache reloads next time instead of keeping stale items.
        revision = self._revision()
        items = {key: item for key, item, _ in self._scan(self.items_ns)}
        turns = [
            key
            for key, value in sorted(
                self._search_all(self.turns_ns),
                key=lambda kv: (time_sort_key(kv[1].get("applied_at")), kv[0]),
            )
        ]
        return MemoryDocument(items, turns, revision, self._read_core_context())

    def _save_all(self, document: MemoryDocument) -> None:
        stale = {key for key, _ in self._search_all(self.items_ns)} - set(document.items)
        ops = [PutOp(self.items_ns, key, None) for key in sorted(stale)]
        ops += [PutOp(self.items_ns, i, item.to_dict()) for i, item in document.items.items()]
        applied = now_iso()
        ops += [
            PutOp(self.turns_ns, t, {"applied_at": applied}, index=False)
            for t in document.applied_turns
        ]
        ops.append(self._core_context_op(document.core_context))
        # The revision goes last so that a reader never sees the new revision with old items.
        for start in range(0, len(ops), WRITE_CHUNK):
            self._writes.batch(ops[start : start + WRITE_CHUNK])
        self._writes.batch([self._revision_op(document.revision)])

    # ── store access ────────────────────────────────────────────────────

    def _revision_op(self, revision: int, stamp: str | None = None) -> PutOp:
        # The stamp tells two writes apart even if they ever set the same counter (two
        # processes writing without a shared lock): caches keyed on it reload either way.
        value = {"revision": revision, "stamp": stamp or secrets.token_hex(8)}
        return PutOp(self.meta_ns, REVISION_KEY, value, index=False)

    def _revision(self) -> int:
        return revision_counter(self._revision_value())

    def _revision_value(self) -> dict[str, Any]:
        stored = self.store.get(self.meta_ns, REVISION_KEY)
        return stored.value if stored else {}

    def _search_all(self, namespace: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
        """Every (key, value) directly in `namespace`, read page by page."""
        found: list[tuple[str, dict[str, Any]]] = []
        offset = 0
        while True:
            page = self.store.search(namespace, limit=PAGE_SIZE, offset=offset)
            found += [(hit.key, hit.value) for hit in page if tuple(hit.namespace) == namespace]
            if len(page) < PAGE_SIZE:
                return found
            offset += PAGE_SIZE

    def _scan(self, namespace: tuple[str, ...]) -> list[tuple[str, MemoryItem, list[str]]]:
        """(id, item, repairs) in creation order, as the other backends list them.

        Stores reset `created_at` on every put, so the order comes from the item's own history.
        """
        scanned = []
        for key, value in self._search_all(namespace):
            repairs: list[str] = []
            scanned.append((key, item_from_raw(key, value, repairs), repairs))
        scanned.sort(key=lambda entry: (time_sort_key(_created_time(entry[1])), entry[0]))
        return scanned

    def _get_item(self, memory_id: str) -> MemoryItem | None:
        stored = self.store.get(self.items_ns, memory_id)
        return None if stored is None else item_from_raw(memory_id, stored.value, [])

    # ── cheap reads ─────────────────────────────────────────────────────

    def _stored_revision(self) -> str:
        return revision_token(self._revision_value())

    def changes_since(self, token: str) -> tuple[str, dict[str, MemoryItem]] | None:
        delta = self.changes.since(token, self._revision_value())
        return None if delta is None else (delta.token, delta.items)

    def _read_document(self) -> MemoryDocument:
        """The cached document brought up to date from the change feed (a few point reads)
        when it can be, else read whole: another replica's write costs what it changed."""
        cached = self._document_cache
        if cached is not None:
            delta = self.changes.since(str(cached[0]), self._revision_value())
            if delta is not None:
                if delta.token != cached[0]:
                    old = cached[1]
                    seen = set(old.applied_turns)
                    document = MemoryDocument(
                        {**old.items, **delta.items},
                        old.applied_turns + [t for t in delta.turns if t not in seen],
                        delta.counter,
                        old.core_context,
                    )
                    self._document_cache = (delta.token, document)
                    return document
                return cached[1]
        return super()._read_document()

    def _read_item(self, memory_id: str) -> MemoryItem | None:
        return self._get_item(memory_id)

    def has_applied(self, turn_id: str) -> bool:
        return self.store.get(self.turns_ns, turn_id) is not None

    # ── self-check ──────────────────────────────────────────────────────

    def _check_and_repair(self) -> tuple[list[str], list[str]]:
        try:
            return self._check_and_repair_items()
        except Exception as exc:  # a store raises its driver's errors: any of them means FAIL
            raise OSError(f"the store {type(self.store).__name__} is not usable: {exc}") from exc

    def _check_and_repair_items(self) -> tuple[list[str], list[str]]:
        with self._write_lock():
            stored = self.store.get(self.meta_ns, REVISION_KEY)
            raw_revision = stored.value.get("revision") if stored else 0
            repaired: list[str] = []
            ops: list[PutOp] = []
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            backup_ns = (BACKUP_NAMESPACE, namespace_label(self.user_id))
            for key, value in self._search_all(self.items_ns):
                repairs: list[str] = []
                item = item_from_raw(key, value, repairs)
                if repairs:
                    repaired += repairs
                    repaired.append(
                        f"item {key!r}: original value kept in {backup_ns} key {key}@{stamp}"
                    )
                    ops.append(PutOp(backup_ns, f"{key}@{stamp}", dict(value), index=False))
                    ops.append(PutOp(self.items_ns, key, item.to_dict()))
            revision = self._revision()
            if revision != raw_revision:
                repaired.append(f"revision was {raw_revision!r}; reset")
            if repaired:
                # Only a repair moves the revision: rewriting it unconditionally could set it
                # back under a writer in another process (the store has no compare-and-set).
                ops.append(self._revision_op(revision + 1))
                self._writes.batch(ops)
            self._probe_writable()
        return [], repaired

    def _probe_writable(self) -> None:
        """Prove that the store takes writes with a key of its own, then remove it."""
        probe_ns = (META_NAMESPACE, namespace_label(self.user_id), PROBE_KEY)
        self._writes.batch([PutOp(probe_ns, PROBE_KEY, {"probe": now_iso()}, index=False)])
        self._writes.batch([PutOp(probe_ns, PROBE_KEY, None)])


def _created_time(item: MemoryItem) -> str:
    for entry in item.history:
        if entry.get("action") == "create" and "via" not in entry:
            return entry.get("time", "")
    return item.created_time
