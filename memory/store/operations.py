"""The changes a manager makes in a write transaction: validated, with history and tombstones."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memory.errors import CopyOnWriteRefused, MemoryNotFound, StaleWrite
from memory.store.branch import (
    Lineage,
    Provenance,
    check_scope,
    is_inherited,
    origin_checkpoint,
    visible_ids,
)
from memory.store.document import Change, MemoryTransaction
from memory.store.item import MemoryItem, check_description, check_reason, check_theme, now_iso

if TYPE_CHECKING:
    from collections.abc import Mapping

_MEMORY_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_expectations(tx: MemoryTransaction, changes: Sequence[Change]) -> None:
    """Refuse the batch when an item changed since the writer saw it (optimistic concurrency).

    Every expectation is compared with the store as the transaction found it, before any change
    of the batch is applied, so a turn that updates then merges one item checks against what it
    read. Hits carry no expectation: a count commutes with any edit.
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


def apply_change(
    tx: MemoryTransaction,
    change: Change,
    provenance: Provenance | None,
    new_id: Callable[[], str],
) -> Any:
    """One change of an `apply` batch; a branch item of another checkpoint is copy-on-write."""
    if change.op == "add":
        return _apply_add(tx, change, provenance, new_id)
    target = _require_id(change.id, change.op)
    # Without a checkpoint there is no branch to protect an ancestor from (local use).
    checkpoint = provenance.checkpoint_id if provenance is not None else ""
    if checkpoint and change.op in ("update", "delete", "merge", "restore"):
        _guard_copy_on_write(tx, target, change.op, checkpoint)
        if change.op == "merge" and change.other_id:
            _guard_copy_on_write(tx, change.other_id, change.op, checkpoint)
            _guard_merge_scopes(tx, target, change.other_id)
    if checkpoint and change.op == "hit":
        item = live(tx, target)
        if item.scope == "branch" and origin_checkpoint(item) != checkpoint:
            return item.hit  # an ancestor's branch item stays byte-stable
    if change.op == "update":
        return update(tx, target, change.reason, change.description, change.theme)
    if change.op == "delete":
        return delete(tx, target, change.reason)
    if change.op == "restore":
        return restore(tx, target, change.reason)
    if change.op == "hit":
        return hit(tx, target)
    if change.op == "merge":
        other = _require_id(change.other_id, "merge", "other_id")
        return merge(tx, target, other, change.description, change.theme, change.reason)
    if change.op == "archive":
        return archive(tx, target, change.reason)
    if change.op == "stale":
        return mark_stale(tx, target, change.reason, change.passed or "")
    raise ValueError(
        f"op {change.op!r} is not one of add, update, delete, merge, hit, restore, archive, stale"
    )


def _apply_add(
    tx: MemoryTransaction, change: Change, provenance: Provenance | None, new_id: Callable[[], str]
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
    item = MemoryItem.create(
        check_description(change.description), check_theme(change.theme), change.reason,
        scope=scope, origin=provenance.as_dict() if provenance else {}, supersedes=supersedes,
    )  # fmt: skip
    return _put_new(tx, change.id if change.id is not None else _free_id(tx, new_id), item)


def add(
    tx: MemoryTransaction, new_id: Callable[[], str], description: str, theme: str, reason: str
) -> str:
    """A new user-scope memory under a fresh id."""
    item = MemoryItem.create(check_description(description), check_theme(theme), reason)
    return _put_new(tx, _free_id(tx, new_id), item)


def _free_id(tx: MemoryTransaction, new_id: Callable[[], str]) -> str:
    memory_id = new_id()
    while tx.get(memory_id) is not None:
        memory_id = new_id()
    return memory_id


def _put_new(tx: MemoryTransaction, memory_id: str, item: MemoryItem) -> str:
    if not isinstance(memory_id, str) or not _MEMORY_ID.match(memory_id):
        raise ValueError(f"id {memory_id!r} must be 1-64 letters, digits, '_' or '-'")
    if tx.get(memory_id) is not None:
        raise ValueError(f"id {memory_id!r} is already taken")
    tx.put(memory_id, item)
    return memory_id


def update(
    tx: MemoryTransaction,
    memory_id: str,
    reason: str,
    new_description: str | None,
    new_theme: str | None,
) -> None:
    item = live(tx, memory_id)
    item.update(reason, new_description, new_theme)
    tx.put(memory_id, item)


def delete(tx: MemoryTransaction, memory_id: str, reason: str) -> str:
    item = live(tx, memory_id)
    item.mark_deleted(reason)
    tx.put(memory_id, item)
    return item.description


def restore(tx: MemoryTransaction, memory_id: str, reason: str) -> None:
    item = tx.get(memory_id)
    if item is None:
        raise MemoryNotFound(memory_id)
    if not item.deleted:
        raise ValueError(f"id {memory_id!r} is not deleted; there is nothing to restore")
    item.mark_restored(reason)
    tx.put(memory_id, item)


def merge(
    tx: MemoryTransaction,
    id1: str,
    id2: str,
    description: str | None,
    theme: str | None,
    reason: str,
) -> None:
    if id1 == id2:
        raise ValueError("merge needs two different ids (id1 and id2 are the same)")
    keep, absorbed = live(tx, id1), live(tx, id2)
    keep.merge(
        absorbed,
        reason,
        check_description(description, "merged_description"),
        check_theme(theme, "merged_theme"),
    )
    absorbed.mark_deleted(reason, action="merged_into", into=id1)
    tx.put(id1, keep)
    tx.put(id2, absorbed)


def archive(tx: MemoryTransaction, memory_id: str, reason: str) -> None:
    """A tombstone with the action "archived": out of retrieval, back with `restore`."""
    item = live(tx, memory_id)
    item.mark_deleted(reason, action="archived")
    tx.put(memory_id, item)


def mark_stale(tx: MemoryTransaction, memory_id: str, reason: str, passed: str) -> None:
    """A history entry saying the memory's date (`passed`) is over. The update time is left
    alone: the text did not change, so the memory keeps its age (hotness) and a writer that
    read it before may still edit it (which makes it current again)."""
    item = live(tx, memory_id)
    entry = {"time": now_iso(), "action": "stale", "reason": check_reason(reason)}
    item.history.append({**entry, "passed": passed} if passed else entry)
    tx.put(memory_id, item)


def hit(tx: MemoryTransaction, memory_id: str) -> int:
    item = live(tx, memory_id)
    item.hit += 1
    tx.put(memory_id, item)
    return item.hit


def live(tx: MemoryTransaction, memory_id: str) -> MemoryItem:
    """The live item, or MemoryNotFound (unknown, or a tombstone)."""
    item = tx.get(memory_id)
    if item is None:
        raise MemoryNotFound(memory_id)
    if item.deleted:
        raise MemoryNotFound(memory_id, "it was deleted; restore it first")
    return item


def copy_on_write_version(memory_id: str, item: MemoryItem, new_id: str) -> Change:
    """This branch's own version of an ancestor's branch memory: a new branch item that
    supersedes it for this branch's descendants. `apply` refuses it (StaleWrite) when the
    ancestor's item changed since it was read (`item` as read), so it never resurrects an
    edited or deleted item."""
    return Change(
        "add",
        id=new_id,
        description=item.description,
        theme=item.theme,
        reason=f"copy-on-write version of {memory_id} in this branch",
        scope="branch",
        supersedes=memory_id,
        expected_other_update_time=item.latest_update_time,
    )


def forget_changes(
    items: Mapping[str, MemoryItem],
    memory_id: str,
    reason: str,
    lineage: Lineage | None,
    provenance: Provenance | None,
    new_id: str,
) -> tuple[list[Change], str]:
    """The changes that forget `memory_id` for a run with `lineage`, and the tombstone's id;
    `items` are all of the user's, tombstones included."""
    item = items.get(memory_id)
    if item is None or item.deleted or memory_id not in visible_ids(items, lineage):
        raise MemoryNotFound(memory_id, "this conversation cannot see it")
    checkpoint = provenance.checkpoint_id if provenance is not None else ""
    if not is_inherited(item, checkpoint):
        return [Change("delete", memory_id, reason=reason)], memory_id
    version = copy_on_write_version(memory_id, item, new_id)
    return [version, Change("delete", new_id, reason=reason)], new_id


def _guard_copy_on_write(tx: MemoryTransaction, memory_id: str, op: str, checkpoint: str) -> None:
    item = tx.get(memory_id)
    if item is None or item.scope != "branch":
        return  # unknown ids fail later with MemoryNotFound; user items are shared
    origin = origin_checkpoint(item)
    if origin != checkpoint:
        raise CopyOnWriteRefused(memory_id, op, origin, checkpoint)


def _guard_merge_scopes(tx: MemoryTransaction, id1: str, id2: str) -> None:
    """In a branch, a merge of a user memory and a branch memory is refused: it would either
    delete the user's fact for every thread or copy this task into every thread."""
    keep, absorbed = tx.get(id1), tx.get(id2)
    if keep is not None and absorbed is not None and keep.scope != absorbed.scope:
        raise ValueError(
            f"merge of {id1!r} (scope {keep.scope}) and {id2!r} (scope {absorbed.scope}) "
            "refused: memories of different scopes are not merged; update one instead"
        )


def _require_id(value: str | None, op: str, field_name: str = "id") -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field_name} is required for {op}")
    return value
