"""BaseMemoryManager: one user's memories over some storage, built on three primitives.

Long because it is the whole public contract of a store (every read and write a backend gets for
free from three primitives).
"""

from __future__ import annotations

import logging
import re
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory.errors import CorruptStoreError, MemoryNotFound, PartlyApplied, WritesDisabled
from memory.store import core_context, operations
from memory.store.branch import Lineage, Provenance, ProvenanceTransaction
from memory.store.document import (
    ApplyResult,
    Change,
    DocumentTransaction,
    MemoryDocument,
    MemoryTransaction,
)
from memory.store.item import MemoryItem
from memory.store.repair import SelfCheckReport

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


class BaseMemoryManager(ABC):
    """One user's memories. Subclasses implement `_load_all` (read the whole document),
    `_save_all` (replace it atomically) and `_write_lock` (exclusive across threads and
    processes). Every change runs inside `transaction()`, by default lock → load → change → save;
    backends with point reads and writes (SQLite, LangGraph stores) override `transaction()`, so
    validation, history and tombstones live in one place (`memory.store.operations`).

    `data_dir` is the folder the backend keeps its files in (None for stores without one): the
    write journal, the trace and snapshots live beside it.
    """

    backend: str = "base"
    data_dir: Path | None = None
    validate_user_id = staticmethod(validate_user_id)  # what every door checks a user id with

    def __init__(self, user_id: str) -> None:
        self.user_id = validate_user_id(user_id)
        self.last_report: SelfCheckReport | None = None
        self._writes_blocked: str | None = None
        self._change_listeners: list[Callable[[], object]] = []
        self._document_cache: tuple[int | str, MemoryDocument] | None = None

    # ── storage primitives (what a backend implements) ──────────────────

    @abstractmethod
    def _load_all(self) -> MemoryDocument:
        """Read the whole document. Raises CorruptStoreError if it cannot be parsed."""

    @abstractmethod
    def _save_all(self, document: MemoryDocument) -> None:
        """Replace the whole document atomically. Called with the write lock held."""

    @abstractmethod
    def _write_lock(self) -> AbstractContextManager[None]:
        """Exclusive access for one read-modify-write sequence."""

    def _check_and_repair(self) -> tuple[list[str], list[str]]:
        """The backend's part of `self_check`: (issues, repaired); raise if unusable."""
        return [], []

    def _stored_revision(self) -> int | str | None:
        """The revision as one cheap point read, or None when the backend has none."""
        return None

    def _read_item(self, memory_id: str) -> MemoryItem | None:
        """One stored item, tombstone or not; backends with point reads override this."""
        return self._read_document().items.get(memory_id)

    def _read_core_context(self) -> dict[str, str]:
        return self._read_document().core_context

    def _update_core_context(self, changes: core_context.StoredChanges) -> dict[str, str]:
        """Merge `changes` into the stored block under the write lock (nothing is written when
        nothing changes). The revision tracks the items only, so it is left alone."""
        with self._write_lock():
            document = self._load_all()
            wanted = core_context.resolve_changes(document.core_context, changes)
            if wanted:
                document.core_context = core_context.merge(document.core_context, wanted)
                self._save_all(document)
            return dict(document.core_context)

    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        """Point reads and writes committed together (or not at all), bumping the revision."""
        self._check_writable()
        with self._write_lock():
            document = self._load_all()
            tx = DocumentTransaction(document)
            yield tx
            if tx.dirty:
                document.revision += 1
                self._save_all(document)
        if tx.dirty:
            self._notify_changed()

    # ── reads ───────────────────────────────────────────────────────────

    @property
    def revision(self) -> str:
        """A token that changes on every write through any manager."""
        revision = self._stored_revision()
        return str(revision if revision is not None else self._read_document().revision)

    def change_token(self) -> str:
        """A token that changes whenever what readers see changes; indexes are keyed on it.
        Backends people may edit by hand add the file's identity to the revision."""
        return self.revision

    def read_document(self) -> MemoryDocument:
        """Everything stored (tombstones, applied turns, core context); treat it as read-only."""
        document = self._read_document()
        # The read cache is keyed on the revision, which tracks the items only: the core context
        # (seeded after a turn is applied) is read afresh, or a snapshot would miss it.
        return replace(document, core_context=self._read_core_context())

    def _read_document(self) -> MemoryDocument:
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

    def list_items(self) -> dict[str, MemoryItem]:
        """Live items by id (tombstones left out). Treat them as read-only."""
        return {i: item for i, item in self._read_document().items.items() if not item.deleted}

    def all_items(self) -> dict[str, MemoryItem]:
        """Every item by id, tombstones included (what `memory.store.branch.visible_ids` needs)."""
        return self._read_document().items

    def deleted_items(self) -> dict[str, MemoryItem]:
        """Tombstones by id, for a "recently deleted" view."""
        return {i: item for i, item in self._read_document().items.items() if item.deleted}

    def changes_since(self, token: str) -> tuple[str, dict[str, MemoryItem]] | None:
        """What was written after `token` (a `change_token()`): the current token and the items
        changed since, tombstones included, so that an index learns them without reading the
        whole store. None when the backend cannot tell (the caller reads everything)."""
        return None

    def branch_items(self) -> dict[str, MemoryItem]:
        """The branch-scope items, tombstones included: all a lineage filter needs to know
        besides which items are live (`memory.store.branch.LineageFilter`)."""
        return {i: item for i, item in self.all_items().items() if item.scope == "branch"}

    def live_count(self) -> int:
        """How many live items there are; backends with a query for it override this."""
        return len(self.list_items())

    def show(self) -> list[dict[str, Any]]:
        """All live memories as `[{id, description, theme}]`, the form a prompt shows."""
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

    def has_applied(self, turn_id: str) -> bool:
        """Whether `apply` already recorded this turn."""
        return turn_id in self._read_document().applied_turns

    # ── changes ─────────────────────────────────────────────────────────

    def add(self, description: str, theme: str, reason: str = "") -> str:
        """Add a memory and return its id."""
        with self.transaction() as tx:
            return operations.add(tx, self.new_id, description, theme, reason)

    def update(
        self, id: str, reason: str, new_description: str | None = None, new_theme: str | None = None
    ) -> None:
        """Change a memory's description and/or theme; the old values go into its history."""
        with self.transaction() as tx:
            operations.update(tx, id, reason, new_description, new_theme)

    def delete(self, id: str, reason: str = "") -> str:
        """Tombstone a memory (undo with `restore`) and return its description."""
        with self.transaction() as tx:
            return operations.delete(tx, id, reason)

    def restore(self, id: str, reason: str = "") -> None:
        """Bring a deleted memory back."""
        with self.transaction() as tx:
            operations.restore(tx, id, reason)

    def merge(
        self, id1: str, id2: str, merged_description: str, merged_theme: str, reason: str
    ) -> None:
        """Merge id2 into id1: id1 keeps both histories, id2 becomes a tombstone pointing at id1."""
        with self.transaction() as tx:
            operations.merge(tx, id1, id2, merged_description, merged_theme, reason)

    def hit(self, id: str) -> int:
        """Count one more use of a memory and return the new count."""
        with self.transaction() as tx:
            return operations.hit(tx, id)

    def purge(self, id: str) -> None:
        """Really remove an item, tombstone or not, with its history. Only ever an explicit call."""
        with self.transaction() as tx:
            if tx.get(id) is None:
                raise MemoryNotFound(id)
            tx.remove(id)

    def apply(
        self,
        changes: Sequence[Change],
        turn_id: str | Sequence[str],
        provenance: Provenance | None = None,
    ) -> ApplyResult:
        """Apply a batch all-or-nothing and record `turn_id`; a repeated turn changes nothing.

        `turn_id` may list the turns of one writer run (a batch): all are recorded in the same
        transaction, so each is either applied or not, never half. A batch whose turns were all
        applied changes nothing; one with only some of them applied raises PartlyApplied.

        With a `provenance`, new items take it as their origin and every history entry written
        records it. With its `checkpoint_id`, branch items written at another checkpoint are
        copy-on-write: update, delete, merge and restore raise CopyOnWriteRefused, a hit is a
        no-op.
        """
        turn_ids = [turn_id] if isinstance(turn_id, str) else list(turn_id)
        if not turn_ids or not all(isinstance(t, str) and t.strip() for t in turn_ids):
            raise ValueError("turn_id must be a non-empty string (or a list of them)")
        turn_id = turn_ids[-1]
        if provenance is not None and not provenance.turn_id:
            provenance = replace(provenance, turn_id=turn_id)
        with self.transaction() as tx:
            applied = [t for t in turn_ids if tx.has_turn(t)]
            if len(applied) == len(turn_ids):
                return ApplyResult(turn_id=turn_id, applied=False, results=[])
            if applied:
                raise PartlyApplied(applied)
            work: MemoryTransaction = tx
            if provenance is not None:
                work = ProvenanceTransaction(tx, provenance)
            operations.check_expectations(tx, changes)
            results = [
                operations.apply_change(work, change, provenance, self.new_id) for change in changes
            ]
            for recorded in turn_ids:
                tx.record_turn(recorded)
            return ApplyResult(turn_id=turn_id, applied=True, results=results)

    def forget(
        self,
        memory_id: str,
        reason: str = "",
        *,
        lineage: Lineage | None = None,
        provenance: Provenance | None = None,
    ) -> str:
        """Delete one memory a run with `lineage` may read, as the memory writer would: an
        ancestor's branch memory gets this branch's own tombstone (copy-on-write), so the other
        branches keep it. Returns the id to `restore`."""
        changes, tombstone = operations.forget_changes(
            self.all_items(), memory_id, reason, lineage, provenance, self.new_id()
        )
        self.apply(changes, f"forget:{secrets.token_hex(8)}", provenance)
        return tombstone

    def import_document(self, document: MemoryDocument) -> int:
        """Store a whole document (a snapshot) in an EMPTY store; ValueError otherwise."""
        with self._write_lock():
            current = self._load_all()
            if current.items or current.core_context:
                raise ValueError(
                    f"the {self.backend} store of user {self.user_id!r} is not empty; import "
                    "only into an empty store (export it first if you mean to replace it)"
                )
            document.revision = max(document.revision, current.revision) + 1
            self._save_all(document)
        self._notify_changed()
        return len(document.items)

    def new_id(self) -> str:
        """A short random id (8 hex digits): short enough to read, unlikely to collide."""
        return secrets.token_hex(4)

    # ── core context block ──────────────────────────────────────────────

    def get_core_context(self, thread_id: str | None = None) -> dict[str, str]:
        """persona, human, the goal of `thread_id` ("" without one) and updated_at; `{}` until
        anything is stored."""
        return core_context.view(self._read_core_context(), thread_id)

    def set_core_context(
        self,
        persona: str | None = None,
        human: str | None = None,
        goal: str | None = None,
        *,
        thread_id: str | None = None,
    ) -> dict[str, str]:
        """Set the given parts (None leaves a part as it is). A goal belongs to one thread: it
        needs `thread_id`. Setting `human` by hand pins it: the writer no longer refreshes it."""
        changes = core_context.hand_edit(persona, human, goal, thread_id)
        self._check_writable()
        stored = self._update_core_context(changes)
        self._notify_changed()
        return core_context.view(stored, thread_id)

    def mark_private(self, thread_id: str) -> bool:
        """Note that `thread_id` is off the record (its id only); True when it was not yet."""
        if not thread_id or core_context.PRIVATE_PREFIX + thread_id in self._read_core_context():
            return False
        self._check_writable()
        self._update_core_context({core_context.PRIVATE_PREFIX + thread_id: "1"})
        self._notify_changed()
        return True

    def private_threads(self) -> list[str]:
        """The threads kept off the record, by id (what the editor and MCP show)."""
        return core_context.private_threads(self._read_core_context())

    def seed_core_context(self, **seeds: str | None) -> dict[str, str]:
        """The writer's seeding (persona, human, thread_id, goal), decided against the block as
        read under the write lock, so a concurrent hand edit is never overwritten."""
        self._check_writable()
        current = self._read_core_context()
        if not core_context.seed_changes(current, **seeds):
            return core_context.view(current, seeds.get("thread_id"))
        written: list[bool] = []

        def decide(current: Mapping[str, str]) -> dict[str, str]:
            changes = core_context.seed_changes(current, **seeds)
            written.append(bool(changes))
            return changes

        stored = self._update_core_context(decide)
        if any(written):
            self._notify_changed()
        return core_context.view(stored, seeds.get("thread_id"))

    # ── health ──────────────────────────────────────────────────────────

    def self_check(self) -> SelfCheckReport:
        """Check that the store is readable, writable and whole; repair what can be repaired.

        FAIL (unreadable or unwritable store) stops writes for this manager until a later check
        passes; reads go on where they can. WARN: something was repaired (originals kept).
        """
        self._writes_blocked = None
        try:
            issues, repaired = self._check_and_repair()
        except CorruptStoreError as exc:
            self._writes_blocked = str(exc)
        except OSError as exc:
            self._writes_blocked = f"storage is not usable: {exc}"
        if self._writes_blocked:
            self.last_report = SelfCheckReport("FAIL", [self._writes_blocked], [], 0)
        else:
            status = "WARN" if issues or repaired else "OK"
            self.last_report = SelfCheckReport(status, issues, repaired, self.live_count())
        return self.last_report

    def _check_writable(self) -> None:
        if self._writes_blocked:
            raise WritesDisabled(
                f"writes for user {self.user_id!r} are stopped: {self._writes_blocked}"
            )

    def add_change_listener(self, callback: Callable[[], object]) -> None:
        """Call `callback()` after every committed write (e.g. a debounced snapshot)."""
        self._change_listeners.append(callback)

    def _notify_changed(self) -> None:
        for callback in list(self._change_listeners):
            try:
                callback()
            except Exception:  # a listener never undoes or fails a committed write
                logger.exception("memory change listener %r failed", callback)
