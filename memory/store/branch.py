"""Branch scope: where a change came from, which checkpoints a run descends from, what it sees."""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory.store.document import MemoryTransaction
from memory.store.item import MemoryItem, parse_time, time_sort_key

SCOPES = ("user", "branch")
SCOPE_POLICIES = ("auto", "user", "branch")
DEFAULT_OVERFETCH = 50


@dataclass(frozen=True)
class Provenance:
    """The thread, checkpoint and turn a stored change was made in ("" when unknown).
    `batch_size` > 1: a batched writer run of that many turns, recorded at its last turn (the
    change may come from any of them, so the last turn's messages need not carry it)."""

    thread_id: str = ""
    checkpoint_id: str = ""
    turn_id: str = ""
    batch_size: int = 1
    said_at: str = ""  # when the turn was said, if not now (an import): its history entries' time

    def as_dict(self) -> dict[str, str]:
        """The non-empty fields, for item origins, history entries and JSON."""
        fields = {
            "thread_id": self.thread_id,
            "checkpoint_id": self.checkpoint_id,
            "turn_id": self.turn_id,
            "batch_size": str(self.batch_size) if self.batch_size > 1 else "",
        }
        return {key: value for key, value in fields.items() if value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Provenance:
        """The inverse of `as_dict`; unknown keys are ignored, missing ones are ""."""
        data = data or {}
        return cls(
            thread_id=str(data.get("thread_id") or ""),
            checkpoint_id=str(data.get("checkpoint_id") or ""),
            turn_id=str(data.get("turn_id") or ""),
            batch_size=batch_size_of(data),
        )


def batch_size_of(entry: Mapping[str, Any]) -> int:
    """How many turns the writer run that made a history entry (or an origin) wrote at once."""
    try:
        return max(1, int(entry.get("batch_size") or 1))
    except (TypeError, ValueError):
        return 1


@dataclass(frozen=True)
class Lineage:
    """The checkpoints of the current run's ancestor chain, the current one included."""

    thread_id: str
    checkpoint_ids: frozenset[str]

    def as_dict(self) -> dict[str, Any]:
        return {"thread_id": self.thread_id, "checkpoint_ids": sorted(self.checkpoint_ids)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Lineage | None:
        if not data:
            return None
        return cls(str(data.get("thread_id") or ""), frozenset(data.get("checkpoint_ids") or ()))


def check_scope(value: object, field_name: str = "scope") -> str:
    """Return "user" or "branch", or raise ValueError naming the field."""
    if value not in SCOPES:
        raise ValueError(f"{field_name} must be 'user' or 'branch', not {value!r}")
    return str(value)


def check_scope_policy(value: object) -> str:
    """Return "auto", "user" or "branch", or raise ValueError."""
    if value not in SCOPE_POLICIES:
        raise ValueError(f"scope_policy must be 'auto', 'user' or 'branch', not {value!r}")
    return str(value)


def origin_checkpoint(item: MemoryItem) -> str:
    """The checkpoint an item was written in ("" when unknown)."""
    return item.origin.get("checkpoint_id", "") if isinstance(item.origin, dict) else ""


def is_inherited(item: MemoryItem, checkpoint: str) -> bool:
    """A branch item written at another checkpoint than `checkpoint`: a run there may not
    change it in place, only write its own version (copy-on-write). Nothing is inherited
    without a checkpoint (no branches)."""
    return bool(checkpoint) and item.scope == "branch" and origin_checkpoint(item) != checkpoint


def in_lineage(item: MemoryItem, lineage: Lineage) -> bool:
    """Whether a branch item was written on this run's ancestor chain."""
    checkpoint = origin_checkpoint(item)
    return bool(checkpoint) and checkpoint in lineage.checkpoint_ids


def visible_ids(items: Mapping[str, MemoryItem], lineage: Lineage | None) -> set[str]:
    """Ids a run with `lineage` may read. `items` must include tombstones.

    Visible: live, and user-scope or written on the lineage, and not superseded by a branch item
    (live or tombstone) written on the lineage. Without a lineage there are no branches to tell
    apart (local use without a checkpointer): every live item is visible.
    """
    if lineage is None:
        return {memory_id for memory_id, item in items.items() if not item.deleted}
    superseded: set[str] = set()
    branch_seen: list[tuple[str, MemoryItem]] = []
    visible: set[str] = set()
    for memory_id, item in items.items():
        if item.scope != "branch":
            if not item.deleted:
                visible.add(memory_id)
            continue
        if not in_lineage(item, lineage):
            continue
        if item.supersedes:
            superseded.add(item.supersedes)
        if not item.deleted:
            branch_seen.append((memory_id, item))
    visible.update(memory_id for memory_id, _ in branch_seen)
    return visible - superseded


class LineageFilter:
    """`memory_id in LineageFilter(branch_items, lineage)`: whether a run with `lineage` may read
    a live item, knowing only the branch-scope items (tombstones included). It answers as
    `visible_ids` does for live ids, without reading the user-scope items: a user item is
    visible unless a branch item on the lineage supersedes it. Ask it about live ids only."""

    def __init__(self, branch_items: Mapping[str, MemoryItem], lineage: Lineage) -> None:
        superseded: set[str] = set()
        seen: set[str] = set()
        for memory_id, item in branch_items.items():
            if not in_lineage(item, lineage):
                continue
            if item.supersedes:
                superseded.add(item.supersedes)
            if not item.deleted:
                seen.add(memory_id)
        self._hidden = (set(branch_items) - seen) | superseded

    def __contains__(self, memory_id: object) -> bool:
        return memory_id not in self._hidden


def overfetch_k(limit: int, overfetch: int = DEFAULT_OVERFETCH) -> int:
    """How many ranked candidates to take before the lineage filter: max(overfetch, 40 x limit)."""
    return max(overfetch, limit * 40)


def filter_ranked(ranked_ids: Iterable[str], visible: Container[str], limit: int) -> list[str]:
    """The first `limit` ranked ids that are visible, in rank order."""
    kept: list[str] = []
    if limit <= 0:
        return kept
    for memory_id in ranked_ids:
        if memory_id in visible:
            kept.append(memory_id)
            if len(kept) >= limit:
                break
    return kept


class ProvenanceTransaction(MemoryTransaction):
    """Wraps a transaction so every history entry written through it records the provenance,
    and, for a turn said in the past (`said_at`), that time rather than now."""

    def __init__(self, inner: MemoryTransaction, provenance: Provenance) -> None:
        self.inner = inner
        self.stamp = provenance.as_dict()
        self.said_at = provenance.said_at
        # The entries each item had when read (kept alive, so that identity is a safe test).
        self._seen: dict[str, list[dict[str, str]]] = {}

    def get(self, memory_id: str) -> MemoryItem | None:
        item = self.inner.get(memory_id)
        if item is not None:
            self._seen[memory_id] = list(item.history)
        return item

    def put(self, memory_id: str, item: MemoryItem) -> None:
        seen = {id(entry) for entry in self._seen.get(memory_id, [])}
        fresh = [e for e in item.history if id(e) not in seen and "via" not in e]
        for entry in fresh:
            # Entries absorbed by a merge ("via") keep the provenance of their own change.
            entry.update(self.stamp)
        if self.said_at and fresh:
            backdate(item, fresh, self.said_at)
        self._seen[memory_id] = list(item.history)
        self.inner.put(memory_id, item)

    def remove(self, memory_id: str) -> None:
        self._seen.pop(memory_id, None)
        self.inner.remove(memory_id)

    def has_turn(self, turn_id: str) -> bool:
        return self.inner.has_turn(turn_id)

    def record_turn(self, turn_id: str) -> None:
        self.inner.record_turn(turn_id)


def backdate(item: MemoryItem, fresh: list[dict[str, str]], said_at: str) -> None:
    """Give the `fresh` history entries of `item` the time `said_at`, but never one before its
    older entries (a memory edited since gets just after its last edit): history stays in
    order, and `latest_update_time` still changes with every write (the stale-write check)."""
    older = [time_sort_key(e.get("time")) for e in item.history if all(e is not f for f in fresh)]
    when = parse_time(said_at)
    if when is None:
        return
    last = max(older, default=(float("-inf"), ""))
    if when.timestamp() <= last[0]:
        when = datetime.fromtimestamp(last[0] + 1e-6, UTC)
    stamp = when.astimezone(UTC).isoformat(timespec="microseconds")
    for entry in fresh:
        entry["time"] = stamp
    item.latest_update_time = stamp
