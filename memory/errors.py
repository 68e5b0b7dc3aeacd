"""Errors raised by the memory system, each naming what was wrong."""

from __future__ import annotations


class MemoryError_(Exception):
    """Base class for every error the memory system raises on purpose."""


class MemoryNotFound(MemoryError_, KeyError):
    """An id that names no memory (or only a tombstone, where a live memory is needed)."""

    def __init__(self, memory_id: str, detail: str = "") -> None:
        self.memory_id = memory_id
        message = f"no memory with id {memory_id!r}"
        super().__init__(f"{message}: {detail}" if detail else message)

    def __str__(self) -> str:  # KeyError would quote the message a second time
        return str(self.args[0])


class CorruptStoreError(MemoryError_):
    """The backing file or database cannot be read; it is kept as it is and writes are refused."""


class WritesDisabled(MemoryError_):
    """self_check reported FAIL for this user: reads go on, writes wait until it is resolved."""


class CopyOnWriteRefused(MemoryError_, ValueError):
    """A branch tried to change a branch item an ancestor (or a sibling) wrote; it must write its
    own version (a new branch item with `supersedes`) so the ancestor stays byte-stable."""

    def __init__(self, memory_id: str, op: str, origin_checkpoint: str, checkpoint: str) -> None:
        self.memory_id = memory_id
        super().__init__(
            f"{op} of memory {memory_id!r} refused: it is a branch memory written at checkpoint "
            f"{origin_checkpoint!r}, not at the current checkpoint {checkpoint!r}; add a new "
            "branch memory with supersedes instead (copy-on-write)"
        )


class StaleWrite(MemoryError_):
    """The memory writer staged a change against an item that changed since it read it (the user
    edited it in the editor meanwhile). Nothing of the batch was applied; re-run the turn on a
    fresh read."""

    def __init__(self, memory_id: str, op: str, expected: str, found: str) -> None:
        self.memory_id = memory_id
        super().__init__(
            f"{op} of memory {memory_id!r} refused: it changed since the writer read it (read at "
            f"{expected!r}, now {found!r}); nothing was applied, re-run the turn on a fresh read"
        )


class PartlyApplied(MemoryError_):
    """Some turns of a batch were applied before (by another writer): nothing was applied now;
    write the others again without them."""

    def __init__(self, applied: list[str]) -> None:
        self.applied = applied
        super().__init__(
            f"turns {', '.join(applied)} of the batch were already applied; nothing was applied "
            "now: write the rest as a batch of its own"
        )


class MemoryBusy(MemoryError_):
    """Another process held this user's write lock longer than the wait allowed: nothing was
    written; the same call can be made again."""

    def __init__(self, user_id: str, waited_seconds: float) -> None:
        self.user_id = user_id
        super().__init__(
            f"the memory of user {user_id!r} is being written by another process; waited "
            f"{waited_seconds:g} s for its write lock, nothing was written: try again"
        )
