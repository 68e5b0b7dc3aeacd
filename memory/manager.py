"""BaseMemoryManager: the seed's three storage primitives and everything built on them."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

from memory.branch import Provenance, ProvenanceTransaction
from memory.core_context import StoredChanges, merge_core_context, resolve_changes
from memory.core_context_access import CoreContextAccess
from memory.document import (
    ApplyResult,
    Change,
    DocumentTransaction,
    MemoryDocument,
    MemoryTransaction,
)
from memory.errors import MemoryNotFound
from memory.item import MemoryItem, time_sort_key
from memory.operations import TransactionOperations
from memory.repair import SelfCheckReport
from memory.self_check import SelfChecking

logger = logging.getLogger(__name__)

_USER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$")
_CAPITAL = re.compile(r"[A-Z]")


def validate_user_id(user_id: object) -> str:
    """Return the id if it is safe to use in a file name or key, else raise ValueError."""
    if not isinstance(user_id, str) or not _USER_ID.match(user_id) or ".." in user_id:
        raise ValueError(
            f"user_id {user_id!r} is not allowed: use 1-128 letters, digits, '_', '-', '.' or '@', "
            "starting with a letter or digit"
        )
    return user_id


def file_stem(user_id: str) -> str:
    """The user's file name stem, distinct on case-insensitive file systems (macOS, Windows):
    each capital letter becomes `^` + its lower case, so `Bob` → `^bob` never meets `bob`."""
    return _CAPITAL.sub(lambda match: "^" + match.group().lower(), validate_user_id(user_id))


class BaseMemoryManager(TransactionOperations, SelfChecking, CoreContextAccess, ABC):
    """One user's memories over some storage, built on three primitives.

    Subclasses implement `_load_all` (read the whole document), `_save_all` (replace it
    atomically) and `_write_lock` (exclusive across threads and processes). Every CRUD method runs
    inside `_transaction()`, which by default is lock → load → change → save. Backends with point
    reads and writes (SQLite, LangGraph stores) override `_transaction()` instead of each method,
    so validation, history and tombstones live in one place.
    """

    backend: str = "base"

    def __init__(self, user_id: str) -> None:
        self.user_id = validate_user_id(user_id)
        self._writes_blocked: str | None = None
        self.last_report: SelfCheckReport | None = None
        self._change_listeners: list[Callable[[], object]] = []
        self.snapshot_scheduler: Any = None  # set by memory.factory when snapshots are kept
        self._document_cache: tuple[int, MemoryDocument] | None = None

    # ── storage primitives ──────────────────────────────────────────────

    @abstractmethod
    def _load_all(self) -> MemoryDocument:
        """Read the whole document. Raises CorruptStoreError if it cannot be parsed."""

    @abstractmethod
    def _save_all(self, document: MemoryDocument) -> None:
        """Replace the whole document atomically. Called with the write lock held."""

    @abstractmethod
    def _write_lock(self) -> AbstractContextManager[None]:
        """Exclusive access for one read-modify-write sequence."""

    @contextmanager
    def _transaction(self) -> Iterator[MemoryTransaction]:
        self._check_writable()
        with self._write_lock():
            document = self._load_all()
            transaction = DocumentTransaction(document)
            yield transaction
            if transaction.dirty:
                document.revision += 1
                self._save_all(document)
        if transaction.dirty:
            self._notify_changed()

    # ── change listeners ────────────────────────────────────────────────

    def add_change_listener(self, callback: Callable[[], object]) -> None:
        """Call `callback()` after every committed write (e.g. a debounced snapshot)."""
        self._change_listeners.append(callback)

    def _notify_changed(self) -> None:
        for callback in list(self._change_listeners):
            try:
                callback()
            except Exception:  # a listener never undoes or fails a committed write
                logger.exception("memory change listener %r failed", callback)

    # ── core context block (seed 000): the public calls are in CoreContextAccess ──

    def _read_core_context(self) -> dict[str, str]:
        return self._read_document().core_context

    def _update_core_context(self, changes: StoredChanges) -> dict[str, str]:
        """Merge `changes` (or what the callable returns for the block as read) into the stored
        block under the write lock; nothing is written when there is nothing to change.
        Backends with their own storage of the block override this."""
        with self._write_lock():
            document = self._load_all()
            wanted = resolve_changes(document.core_context, changes)
            if not wanted:
                return dict(document.core_context)
            document.core_context = merge_core_context(document.core_context, wanted)
            # The revision tracks the items (retrieval indexes key on it); the block is apart.
            self._save_all(document)
            return dict(document.core_context)

    def _read_document(self) -> MemoryDocument:
        """The document for read-only use: cached while `_stored_revision()` stays the same."""
        revision = self._stored_revision()
        if revision is None:
            return self._load_all()
        cached = self._document_cache
        if cached is not None and cached[0] == revision:
            return cached[1]
        document = self._load_all()
        # Keyed by the revision read *before* loading: a write landing mid-load leaves the cache
        # older than the store, so the next read loads again instead of keeping stale items.
        self._document_cache = (revision, document)
        return document

    def _stored_revision(self) -> int | None:
        """The revision as one cheap point read (every write through any manager bumps it), or
        None when the backend has none; backends with a point read override this."""
        return None

    # ── queries ─────────────────────────────────────────────────────────

    @property
    def revision(self) -> str:
        """A token that changes on every write, so readers can cache indexes cheaply."""
        revision = self._stored_revision()
        return str(revision if revision is not None else self._read_document().revision)

    def list_items(self) -> dict[str, MemoryItem]:
        """Live items by id (tombstones left out). Treat them as read-only."""
        return {i: item for i, item in self._read_document().items.items() if not item.deleted}

    def show(self) -> list[dict[str, Any]]:
        """All live memories as `[{id, description, theme}]`, the seed's LLM-friendly form."""
        return [
            {"id": i, "description": item.description, "theme": item.theme}
            for i, item in self.list_items().items()
        ]

    def get(self, memory_id: str, include_deleted: bool = False) -> MemoryItem:
        """One item by id; MemoryNotFound if unknown (or deleted, unless asked for)."""
        item = self._read_item(memory_id)
        if item is None or (item.deleted and not include_deleted):
            raise MemoryNotFound(memory_id, "it was deleted" if item else "")
        return item

    def show_description_history(self, memory_id: str) -> list[dict[str, str]]:
        """The history of one item (tombstones too), newest first."""
        return self.get(memory_id, include_deleted=True).show_description_history()

    def get_memories_grouped(self) -> dict[str, list[dict[str, Any]]]:
        """Live items grouped by theme, newest first within a theme, for the editor's waterfall."""
        groups: dict[str, list[dict[str, Any]]] = {}
        ordered = sorted(
            self._live_for_listing(),
            key=lambda kv: time_sort_key(kv[1].latest_update_time),
            reverse=True,
        )
        for memory_id, item in ordered:
            groups.setdefault(item.theme, []).append(
                {
                    "id": memory_id,
                    "description": item.description,
                    "theme": item.theme,
                    "hit": item.hit,
                    "latest_update_time": item.latest_update_time,
                }
            )
        return groups

    def _read_item(self, memory_id: str) -> MemoryItem | None:
        """One stored item, tombstone or not; backends with point reads override this."""
        return self._read_document().items.get(memory_id)

    def _live_for_listing(self) -> list[tuple[str, MemoryItem]]:
        """(id, item) of the live items for listings that need no history; may be cheaper."""
        return list(self.list_items().items())

    def all_items(self) -> dict[str, MemoryItem]:
        """Every item by id, tombstones included (what `memory.branch.visible_ids` needs)."""
        return self._read_document().items

    def deleted_items(self) -> dict[str, MemoryItem]:
        """Tombstones by id, for a "recently deleted" view."""
        return {i: item for i, item in self._read_document().items.items() if item.deleted}

    def has_applied(self, turn_id: str) -> bool:
        """Whether `apply` already recorded this turn."""
        return turn_id in self._read_document().applied_turns

    # ── CRUD ────────────────────────────────────────────────────────────

    def add(self, description: str, theme: str, reason: str = "") -> str:
        """Add a memory and return its id."""
        with self._transaction() as tx:
            return self._add(tx, description, theme, reason, None)

    def update(
        self,
        id: str,
        reason: str,
        new_description: str | None = None,
        new_theme: str | None = None,
    ) -> None:
        """Change a memory's description and/or theme; the old values go into its history."""
        with self._transaction() as tx:
            self._update(tx, id, reason, new_description, new_theme)

    def delete(self, id: str, reason: str = "") -> str:
        """Tombstone a memory (undo with `restore`) and return its description."""
        with self._transaction() as tx:
            return self._delete(tx, id, reason)

    def restore(self, id: str, reason: str = "") -> None:
        """Bring a deleted memory back."""
        with self._transaction() as tx:
            self._restore(tx, id, reason)

    def merge(
        self, id1: str, id2: str, merged_description: str, merged_theme: str, reason: str
    ) -> None:
        """Merge id2 into id1: id1 keeps both histories, id2 becomes a tombstone pointing at id1."""
        with self._transaction() as tx:
            self._merge(tx, id1, id2, merged_description, merged_theme, reason)

    def hit(self, id: str) -> int:
        """Count one more use of a memory and return the new count."""
        with self._transaction() as tx:
            return self._hit(tx, id)

    def purge(self, id: str) -> None:
        """Really remove an item, tombstone or not, with its history. Only ever an explicit call."""
        with self._transaction() as tx:
            if tx.get(id) is None:
                raise MemoryNotFound(id)
            tx.remove(id)

    def apply(
        self, changes: Sequence[Change], turn_id: str, provenance: Provenance | None = None
    ) -> ApplyResult:
        """Apply a batch all-or-nothing and record `turn_id`; a repeated turn changes nothing.

        With a `provenance`, new items take it as their origin and every history entry written
        records it. With its `checkpoint_id`, branch items written at another checkpoint are
        copy-on-write: update, delete, merge and restore raise CopyOnWriteRefused, a hit is a
        no-op.
        """
        if not isinstance(turn_id, str) or not turn_id.strip():
            raise ValueError("turn_id must be a non-empty string")
        if provenance is not None and not provenance.turn_id:
            provenance = replace(provenance, turn_id=turn_id)
        with self._transaction() as tx:
            if tx.has_turn(turn_id):
                return ApplyResult(turn_id=turn_id, applied=False, results=[])
            work: MemoryTransaction = tx
            if provenance is not None:
                work = ProvenanceTransaction(tx, provenance)
            self._check_expectations(tx, changes)
            results = [self._apply_one(work, change, provenance) for change in changes]
            tx.record_turn(turn_id)
            return ApplyResult(turn_id=turn_id, applied=True, results=results)

    def _live_count(self) -> int:
        """How many live items there are; backends with a query for it override this."""
        return len(self.list_items())
