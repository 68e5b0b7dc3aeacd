"""ErasureReport: what an erase removed, where, and what it could not remove."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ErasureReport:
    """What `erase` / `erase_user` removed: counts by place ("store: memories", "archive:
    messages", "journal: turns", ...), the files rewritten or removed, and notes on what is
    left and why (the thread's checkpoints, a WAL another reader kept open)."""

    user_id: str
    memory_ids: list[str] = field(default_factory=list)  # empty for a whole user
    removed: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    threads_deleted: list[str] = field(default_factory=list)

    def count(self, where: str, how_many: int) -> None:
        """Add `how_many` removed things at `where` (zeros are kept out of the report)."""
        if how_many:
            self.removed[where] = self.removed.get(where, 0) + how_many

    def file(self, path: object, what: str) -> None:
        self.files.append(f"{what} {path}")

    @property
    def total(self) -> int:
        return sum(self.removed.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "memory_ids": list(self.memory_ids),
            "removed": dict(self.removed),
            "files": list(self.files),
            "threads_deleted": list(self.threads_deleted),
            "notes": list(self.notes),
        }

    def describe(self) -> str:
        """The report as lines a person reads (the CLI prints it)."""
        what = f"memory {', '.join(self.memory_ids)}" if self.memory_ids else "every memory"
        lines = [f"erased {what} of user {self.user_id!r}:"]
        lines += [f"  {where}: {count}" for where, count in sorted(self.removed.items())]
        if not self.removed:
            lines.append("  nothing was stored")
        lines += [f"  {entry}" for entry in self.files]
        if self.threads_deleted:
            lines.append(f"  threads deleted: {', '.join(self.threads_deleted)}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)
