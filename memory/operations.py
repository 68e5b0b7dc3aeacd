"""The operations every manager runs inside a write transaction, and the stale-write check."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from typing import Any

from memory.branch import Provenance, check_scope, origin_checkpoint
from memory.document import Change, MemoryTransaction
from memory.errors import CopyOnWriteRefused, MemoryNotFound, StaleWrite
from memory.item import MemoryItem, check_description, check_theme

_MEMORY_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class TransactionOperations:
    """add / update / delete / restore / merge / hit over a MemoryTransaction, validated, with
    history and tombstones; `BaseMemoryManager` runs them inside its `_transaction()`."""

    @staticmethod
    def _check_expectations(tx: MemoryTransaction, changes: Sequence[Change]) -> None:
        """Refuse the batch when an item changed since the writer saw it (optimistic concurrency).

        Every expectation is compared with the store as the transaction found it, before any
        change of the batch is applied, so a turn that updates then merges one item checks
        against what it read. Hits carry no expectation: a count commutes with any edit.
        """
        for change in changes:
            # A copy-on-write add expects its superseded item as read: unchanged and live.
            other = change.supersedes if change.op == "add" else change.other_id
            expectations = (
                (None if change.op == "add" else change.id, change.expected_update_time),
                (other, change.expected_other_update_time),
            )
            for memory_id, expected in expectations:
                if not memory_id or expected is None:
                    continue
                item = tx.get(memory_id)
                if item is not None and item.latest_update_time != expected:
                    raise StaleWrite(memory_id, change.op, expected, item.latest_update_time)
                if item is not None and item.deleted and change.op == "add":
                    raise StaleWrite(memory_id, change.op, expected, "deleted")

    def _apply_one(
        self, tx: MemoryTransaction, change: Change, provenance: Provenance | None = None
    ) -> Any:
        if change.op == "add":
            return self._apply_add(tx, change, provenance)
        target = self._require_id(change.id, change.op)
        # Without a checkpoint there is no branch to protect an ancestor from (local use).
        checkpoint = provenance.checkpoint_id if provenance is not None else ""
        if checkpoint and change.op in ("update", "delete", "merge", "restore"):
            self._guard_copy_on_write(tx, target, change.op, checkpoint)
            if change.op == "merge" and change.other_id:
                self._guard_copy_on_write(tx, change.other_id, change.op, checkpoint)
                self._guard_merge_scopes(tx, target, change.other_id)
        if checkpoint and change.op == "hit":
            item = self._live(tx, target)
            if item.scope == "branch" and origin_checkpoint(item) != checkpoint:
                return item.hit  # an ancestor's branch item stays byte-stable
        if change.op == "update":
            return self._update(tx, target, change.reason, change.description, change.theme)
        if change.op == "delete":
            return self._delete(tx, target, change.reason)
        if change.op == "restore":
            return self._restore(tx, target, change.reason)
        if change.op == "hit":
            return self._hit(tx, target)
        if change.op == "merge":
            other = self._require_id(change.other_id, "merge", "other_id")
            return self._merge(tx, target, other, change.description, change.theme, change.reason)
        raise ValueError(f"op {change.op!r} is not one of add, update, delete, merge, hit, restore")

    def _apply_add(
        self, tx: MemoryTransaction, change: Change, provenance: Provenance | None
    ) -> str:
        scope = check_scope(change.scope or "user")
        if scope == "branch" and (provenance is None or not provenance.checkpoint_id):
            raise ValueError("scope 'branch' needs a provenance with a checkpoint_id")
        supersedes = change.supersedes or ""
        if supersedes:
            if scope != "branch":
                raise ValueError("supersedes is only for scope 'branch' (a copy-on-write version)")
            superseded = tx.get(supersedes)
            if superseded is None:
                raise MemoryNotFound(supersedes, "named by supersedes")
            if superseded.deleted:
                # A version of a deleted memory would bring it back in this branch.
                raise MemoryNotFound(supersedes, "named by supersedes, it was deleted")
        origin = provenance.as_dict() if provenance is not None else {}
        return self._add(
            tx, change.description, change.theme, change.reason, change.id,
            scope=scope, origin=origin, supersedes=supersedes,
        )  # fmt: skip

    @staticmethod
    def _guard_copy_on_write(
        tx: MemoryTransaction, memory_id: str, op: str, checkpoint: str
    ) -> None:
        item = tx.get(memory_id)
        if item is None or item.scope != "branch":
            return  # unknown ids fail later with MemoryNotFound; user items are shared
        origin = origin_checkpoint(item)
        if origin != checkpoint:
            raise CopyOnWriteRefused(memory_id, op, origin, checkpoint)

    @staticmethod
    def _guard_merge_scopes(tx: MemoryTransaction, id1: str, id2: str) -> None:
        """In a branch, a merge of a user memory and a branch memory is refused: it would either
        delete the user's fact for every thread or copy this task into every thread."""
        keep, absorbed = tx.get(id1), tx.get(id2)
        if keep is not None and absorbed is not None and keep.scope != absorbed.scope:
            raise ValueError(
                f"merge of {id1!r} (scope {keep.scope}) and {id2!r} (scope {absorbed.scope}) "
                "refused: memories of different scopes are not merged; update one instead"
            )

    def _add(
        self,
        tx: MemoryTransaction,
        description: str | None,
        theme: str | None,
        reason: str,
        wanted_id: str | None,
        *,
        scope: str = "user",
        origin: dict[str, str] | None = None,
        supersedes: str = "",
    ) -> str:
        item = MemoryItem.create(
            check_description(description), check_theme(theme), reason,
            scope=scope, origin=origin, supersedes=supersedes,
        )  # fmt: skip
        if wanted_id is not None:
            if not _MEMORY_ID.match(wanted_id):
                raise ValueError(f"id {wanted_id!r} must be 1-64 letters, digits, '_' or '-'")
            if tx.get(wanted_id) is not None:
                raise ValueError(f"id {wanted_id!r} is already taken")
            memory_id = wanted_id
        else:
            memory_id = self._generate_id()
            while tx.get(memory_id) is not None:
                memory_id = self._generate_id()
        tx.put(memory_id, item)
        return memory_id

    def _update(
        self,
        tx: MemoryTransaction,
        memory_id: str,
        reason: str,
        new_description: str | None,
        new_theme: str | None,
    ) -> None:
        item = self._live(tx, memory_id)
        item.update(reason, new_description, new_theme)
        tx.put(memory_id, item)

    def _delete(self, tx: MemoryTransaction, memory_id: str, reason: str) -> str:
        item = self._live(tx, memory_id)
        item.mark_deleted(reason)
        tx.put(memory_id, item)
        return item.description

    def _restore(self, tx: MemoryTransaction, memory_id: str, reason: str) -> None:
        item = tx.get(memory_id)
        if item is None:
            raise MemoryNotFound(memory_id)
        if not item.deleted:
            raise ValueError(f"id {memory_id!r} is not deleted; there is nothing to restore")
        item.mark_restored(reason)
        tx.put(memory_id, item)

    def _merge(
        self,
        tx: MemoryTransaction,
        id1: str,
        id2: str,
        description: str | None,
        theme: str | None,
        reason: str,
    ) -> None:
        if id1 == id2:
            raise ValueError("merge needs two different ids (id1 and id2 are the same)")
        keep, absorbed = self._live(tx, id1), self._live(tx, id2)
        keep.merge(
            absorbed,
            reason,
            check_description(description, "merged_description"),
            check_theme(theme, "merged_theme"),
        )
        absorbed.mark_deleted(reason, action="merged_into", into=id1)
        tx.put(id1, keep)
        tx.put(id2, absorbed)

    def _hit(self, tx: MemoryTransaction, memory_id: str) -> int:
        item = self._live(tx, memory_id)
        item.hit += 1
        tx.put(memory_id, item)
        return item.hit

    @staticmethod
    def _live(tx: MemoryTransaction, memory_id: str) -> MemoryItem:
        item = tx.get(memory_id)
        if item is None:
            raise MemoryNotFound(memory_id)
        if item.deleted:
            raise MemoryNotFound(memory_id, "it was deleted; restore it first")
        return item

    @staticmethod
    def _require_id(value: str | None, op: str, field_name: str = "id") -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{field_name} is required for {op}")
        return value

    def _generate_id(self) -> str:
        """A short random id, as in the seed."""
        return secrets.token_hex(4)
