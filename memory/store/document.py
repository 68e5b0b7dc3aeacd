"""The data a manager persists (MemoryDocument) and the units of change applied to it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from memory.store.item import MemoryItem


@dataclass
class MemoryDocument:
    """Everything one user's store holds: items (tombstones included), applied turns, revision.

    `_load_all` returns the whole document, not only the items, so that the revision and the
    applied turn ids are persisted in the same atomic write as the items.
    """

    items: dict[str, MemoryItem] = field(default_factory=dict)
    applied_turns: list[str] = field(default_factory=list)
    revision: int = 0
    core_context: dict[str, str] = field(default_factory=dict)  # persona, human, goal, updated_at


@dataclass(frozen=True)
class Change:
    """One operation of an `apply` batch. `id` may be chosen in advance for an `add`."""

    op: Literal["add", "update", "delete", "merge", "hit", "restore", "archive", "stale"]
    id: str | None = None
    description: str | None = None
    theme: str | None = None
    reason: str = ""
    other_id: str | None = None  # merge: the item absorbed into `id`
    scope: str | None = None  # add: "user" (default) or "branch" (needs a provenance checkpoint)
    supersedes: str | None = None  # add: the ancestor's branch item this version replaces
    # Optimistic concurrency: the `latest_update_time` of `id` / `other_id` when the writer read
    # them; `apply` refuses the batch (StaleWrite) when the item changed since. None: no check.
    # For an `add` with `supersedes`, `expected_other_update_time` is that of the superseded item.
    expected_update_time: str | None = None
    expected_other_update_time: str | None = None
    passed: str | None = None  # stale: the date (YYYY-MM-DD) that passed


@dataclass(frozen=True)
class ApplyResult:
    """The outcome of `apply`: `applied` is False when the turn had already been applied."""

    turn_id: str
    applied: bool
    results: list[Any]


class MemoryTransaction(ABC):
    """Point reads and writes inside one write lock; nothing is stored unless it commits."""

    @abstractmethod
    def get(self, memory_id: str) -> MemoryItem | None: ...

    @abstractmethod
    def put(self, memory_id: str, item: MemoryItem) -> None: ...

    @abstractmethod
    def remove(self, memory_id: str) -> None: ...

    @abstractmethod
    def has_turn(self, turn_id: str) -> bool: ...

    @abstractmethod
    def record_turn(self, turn_id: str) -> None: ...


class DocumentTransaction(MemoryTransaction):
    """The default transaction: load the whole document, change it in memory, save it whole."""

    def __init__(self, document: MemoryDocument) -> None:
        self.document = document
        self.dirty = False

    def get(self, memory_id: str) -> MemoryItem | None:
        return self.document.items.get(memory_id)

    def put(self, memory_id: str, item: MemoryItem) -> None:
        self.document.items[memory_id] = item
        self.dirty = True

    def remove(self, memory_id: str) -> None:
        self.document.items.pop(memory_id, None)
        self.dirty = True

    def has_turn(self, turn_id: str) -> bool:
        return turn_id in self.document.applied_turns

    def record_turn(self, turn_id: str) -> None:
        self.document.applied_turns.append(turn_id)
        self.dirty = True
